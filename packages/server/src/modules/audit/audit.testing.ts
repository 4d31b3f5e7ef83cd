import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Service } from '../../main.js';
import type { AuditEntry, AuditList } from './audit.schemas.js';

/** Helpers for the audit tests: read a project's whole log through the API. */

export interface AuditReader {
  /** Every entry of the project, newest first, page by page through `starting_after`. */
  all(query?: Record<string, string>): Promise<AuditEntry[]>;
  /** The entries a request left (by its `Request-Id`). */
  of(response: LightMyRequestResponse): Promise<AuditEntry[]>;
}

export function auditReader(service: Service, secretKey: string): AuditReader {
  const call = (options: InjectOptions) => service.app.inject(options);
  const all = async (query: Record<string, string> = {}): Promise<AuditEntry[]> => {
    const entries: AuditEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const params = new URLSearchParams({ ...query, limit: '100', ...(after === undefined ? {} : { starting_after: after }) });
      const response = await call({ method: 'GET', url: `/v1/audit-logs?${params.toString()}`, headers: { 'x-api-key': secretKey } });
      if (response.statusCode !== 200) throw new Error(`audit list failed: ${response.statusCode} ${response.body}`);
      const page = response.json<AuditList>();
      entries.push(...page.data);
      if (!page.has_more) return entries;
      after = page.data[page.data.length - 1]?.id;
    }
  };
  return {
    all,
    async of(response) {
      const requestId = response.headers['request-id'];
      return (await all()).filter((entry) => entry.request_id === requestId);
    },
  };
}

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { AuditEntrySchema, AuditListSchema, AuditParams, ExportAuditQuery, ListAuditQuery } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['audit'];

/** The audit log, read-only: list, one entry, and the JSON-lines export. */
export function auditRoutes(audit: AuditService): RouteModule {
  return (app: FastifyInstance) => {
    app.get(
      '/v1/audit-logs',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listAuditLogs',
          description:
            'The audit log, newest first: who changed what, when and from where, and whether it was refused; money movements are read from the ledger. `action`, `actor_id`, `resource_id`, `since` and `until` narrow it.',
          tags,
          security,
          summary: 'List audit log entries, newest first',
          querystring: ListAuditQuery,
          response: { 200: AuditListSchema },
        },
      },
      (request) => audit.list(requireSecretKey(request).projectId, request.query as ListAuditQuery),
    );

    app.get(
      '/v1/audit-logs/export',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'exportAuditLogs',
          description:
            'The audit log entries matching the filters as JSON lines (`application/x-ndjson`), oldest first, streamed: one entry a line, for an archive or a SIEM.',
          tags,
          security,
          summary: 'Export audit log entries as JSON lines (application/x-ndjson), oldest first, streamed',
          querystring: ExportAuditQuery,
          response: {
            200: {
              description: 'The matching entries as JSON lines: one audit log entry a line, oldest first.',
              content: { 'application/x-ndjson': { schema: { type: 'string' } } },
            },
          },
        },
      },
      (request, reply) => {
        const lines = audit.exportLines(requireSecretKey(request).projectId, request.query as ExportAuditQuery);
        return reply.type('application/x-ndjson; charset=utf-8').send(Readable.from(lines));
      },
    );

    app.get(
      '/v1/audit-logs/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getAuditLog',
          description: 'An audit log entry: the action, its actor, the resource, the request id, address and user agent, and the outcome.',
          tags,
          security,
          summary: 'Retrieve an audit log entry',
          params: AuditParams,
          response: { 200: AuditEntrySchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string } }>) => audit.get(requireSecretKey(request).projectId, request.params.id),
    );
  };
}

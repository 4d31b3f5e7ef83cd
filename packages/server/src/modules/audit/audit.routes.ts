import { Readable } from 'node:stream';
import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { AuditEntrySchema, AuditListSchema, AuditParams, ExportAuditQuery, ListAuditQuery } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

/** The audit log, read-only: list, one entry, and the JSON-lines export. */
export function auditRoutes(audit: AuditService): RouteModule {
  return routeModule('audit', [
    defineRoute({
      method: 'GET',
      url: '/v1/audit-logs',
      credential: 'secret',
      operationId: 'listAuditLogs',
      summary: 'List audit log entries, newest first',
      description:
        'The audit log, newest first: who changed what, when and from where, and whether it was refused; money movements are read from the ledger. `action`, `actor_id`, `resource_id`, `since` and `until` narrow it.',
      querystring: ListAuditQuery,
      response: { 200: AuditListSchema },
      handler: (request) => audit.list(requireSecretKey(request).projectId, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/audit-logs/export',
      credential: 'secret',
      operationId: 'exportAuditLogs',
      summary: 'Export audit log entries as JSON lines (application/x-ndjson), oldest first, streamed',
      description:
        'The audit log entries matching the filters as JSON lines (`application/x-ndjson`), oldest first, streamed: one entry a line, for an archive or a SIEM.',
      querystring: ExportAuditQuery,
      response: {
        200: {
          description: 'The matching entries as JSON lines: one audit log entry a line, oldest first.',
          content: { 'application/x-ndjson': { schema: { type: 'string' } } },
        },
      },
      handler: (request, reply) => {
        const lines = audit.exportLines(requireSecretKey(request).projectId, request.query);
        return reply.type('application/x-ndjson; charset=utf-8').send(Readable.from(lines));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/audit-logs/:id',
      credential: 'secret',
      operationId: 'getAuditLog',
      summary: 'Retrieve an audit log entry',
      description: 'An audit log entry: the action, its actor, the resource, the request id, address and user agent, and the outcome.',
      params: AuditParams,
      response: { 200: AuditEntrySchema },
      handler: (request) => audit.get(requireSecretKey(request).projectId, request.params.id),
    }),
  ]);
}

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
          tags,
          security,
          summary: 'Export audit log entries as JSON lines (application/x-ndjson), oldest first, streamed',
          querystring: ExportAuditQuery,
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

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import { databaseReachable } from '../db/database.js';
import { ApiError } from '../shared/errors.js';
import type { HttpMetrics } from './metrics.js';

export interface OpsRoutesOptions {
  readonly db: Db;
  readonly metrics: HttpMetrics;
}

/** Health, readiness, metrics and the OpenAPI document: outside /v1's credentials and rate limits. */
export function registerOpsRoutes(app: FastifyInstance, options: OpsRoutesOptions): void {
  const config = { credential: 'public', rateLimited: false } as const;
  const Status = Type.Object({ status: Type.String() });

  const tags = ['operations'];

  app.get(
    '/healthz',
    { config, schema: { operationId: 'getHealth', tags, summary: 'The process is up', response: { 200: Status } } },
    () => ({
      status: 'ok',
    }),
  );

  app.get(
    '/readyz',
    { config, schema: { operationId: 'getReadiness', tags, summary: 'The database answers', response: { 200: Status } } },
    async () => {
      if (!(await databaseReachable(options.db))) throw new ApiError('service_unavailable', 'The database is not reachable.');
      return { status: 'ready' };
    },
  );

  // Documented as public for now; an optional bearer token for it (METRICS_TOKEN) gets its own
  // security scheme when it lands.
  app.get(
    '/metrics',
    {
      config,
      schema: {
        operationId: 'getMetrics',
        tags,
        summary: 'Prometheus metrics, in the Prometheus text format',
        response: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    async (_request, reply) => {
      const text = await options.metrics.registry.metrics();
      return reply.type(options.metrics.registry.contentType).send(text);
    },
  );

  app.get(
    '/v1/openapi.json',
    {
      config,
      schema: {
        operationId: 'getOpenApiDocument',
        tags,
        summary: 'This API as OpenAPI 3.1',
        response: { 200: { description: 'The OpenAPI document.', type: 'object', additionalProperties: true } },
      },
    },
    () => app.swagger(),
  );
}

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

  app.get('/healthz', { config, schema: { tags: ['operations'], summary: 'The process is up', response: { 200: Status } } }, () => ({
    status: 'ok',
  }));

  app.get('/readyz', { config, schema: { tags: ['operations'], summary: 'The database answers', response: { 200: Status } } }, async () => {
    if (!(await databaseReachable(options.db))) throw new ApiError('service_unavailable', 'The database is not reachable.');
    return { status: 'ready' };
  });

  app.get('/metrics', { config, schema: { tags: ['operations'], summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });

  app.get('/v1/openapi.json', { config, schema: { tags: ['operations'], summary: 'This API as OpenAPI 3.1', hide: true } }, () =>
    app.swagger(),
  );
}

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import { databaseReachable } from '../db/database.js';
import { constantTimeEqual, sha256Hex } from '../lib/crypto.js';
import { ApiError } from '../lib/errors.js';
import { defineRoute, type RouteDeclaration, registerRoutes } from '../lib/routes.js';
import type { HttpMetrics } from './metrics.js';
import { OPENAPI_PATH } from './openapi.js';

export interface OpsRoutesOptions {
  readonly db: Db;
  readonly metrics: HttpMetrics;
  /** `METRICS_TOKEN`: when set, `GET /metrics` needs it as a bearer token. */
  readonly metricsToken: string | undefined;
  /** `NODE_ENV=production`: `/metrics` exists only with a token. */
  readonly production: boolean;
}

/**
 * Refuses a scrape without the metrics token, when one is configured. The hashes are compared, in
 * constant time, so that neither the token's characters nor its length show in the timing.
 */
function checkMetricsToken(expected: string | undefined, authorization: string | undefined): void {
  if (expected === undefined) return;
  if (authorization === undefined || authorization.trim() === '') {
    throw new ApiError('credential_missing', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (match?.[1] === undefined || !constantTimeEqual(sha256Hex(match[1]), sha256Hex(expected))) {
    throw new ApiError('metrics_token_invalid', 'The metrics token is not the one this service was started with (METRICS_TOKEN).');
  }
}

/**
 * Health, readiness, metrics and the OpenAPI document: outside /v1's credentials and rate limits.
 * `/metrics` takes its own token when METRICS_TOKEN is set; in production without one it is not
 * served at all (404), since what it tells (routes, error rates, process figures) is for the
 * operator only and an open one on a public address is a mistake easily made. A scrape never
 * queries the database: every gauge is held in memory (docs/configuration.md, `METRICS_TOKEN`).
 */
export function registerOpsRoutes(app: FastifyInstance, options: OpsRoutesOptions): void {
  const Status = Type.Object({ status: Type.String() });
  registerRoutes(app, 'operations', [
    defineRoute({
      method: 'GET',
      url: '/healthz',
      credential: 'public',
      rateLimited: false,
      operationId: 'getHealth',
      summary: 'The process is up',
      description:
        'Answers 200 while the process runs, without touching the database: for a liveness probe. Never rate limited and needs no credential.',
      response: { 200: { ...Status, description: 'Always `{"status": "ok"}`.' } },
      handler: () => ({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      url: '/readyz',
      credential: 'public',
      rateLimited: false,
      operationId: 'getReadiness',
      summary: 'The database answers',
      description:
        'Answers 200 once the database answers a query, else 503 `service_unavailable`: for a readiness probe or a load balancer. Never rate limited and needs no credential.',
      response: { 200: { ...Status, description: '`{"status": "ready"}`: the database answered.' } },
      handler: async () => {
        if (!(await databaseReachable(options.db))) throw new ApiError('service_unavailable', 'The database is not reachable.');
        return { status: 'ready' };
      },
    }),
    // Public unless METRICS_TOKEN is set; then a bearer token (the metricsToken security scheme).
    // In production, no token means no route.
    ...(!options.production || options.metricsToken !== undefined ? [metricsRoute(options)] : []),
    defineRoute({
      method: 'GET',
      url: OPENAPI_PATH,
      credential: 'public',
      rateLimited: false,
      operationId: 'getOpenApiDocument',
      summary: 'This API as OpenAPI 3.1',
      description:
        'This document: every route with its parameters, bodies, responses and error codes, and the webhook events as `webhooks`, generated from the route schemas the server validates with. The `/docs` page renders it. Needs no credential.',
      response: { 200: { description: 'The OpenAPI document.', type: 'object', additionalProperties: true } },
      handler: () => app.swagger(),
    }),
  ]);
}

function metricsRoute(options: OpsRoutesOptions): RouteDeclaration {
  return defineRoute({
    method: 'GET',
    url: '/metrics',
    credential: 'public',
    rateLimited: false,
    operationId: 'getMetrics',
    summary: 'Prometheus metrics, in the Prometheus text format',
    description:
      'The process and HTTP metrics (request counts and durations by route and status, webhook delivery figures) for a Prometheus scrape, read from memory without a database query. With `METRICS_TOKEN` set it needs that token as a bearer token; in production without one the route does not exist.',
    response: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } } },
    handler: async (request, reply) => {
      checkMetricsToken(options.metricsToken, request.headers.authorization);
      const text = await options.metrics.registry.metrics();
      return reply.type(options.metrics.registry.contentType).send(text);
    },
  });
}

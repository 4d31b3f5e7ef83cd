import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.js';
import { type Db, isHostLost } from '../db/database.js';
import type { ProjectsService } from '../modules/projects/projects.service.js';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { activeTracer } from '../lib/tracing.js';
import type { SecretBox } from '../lib/secret-box.js';
import { credentialGuard } from './credentials.js';
import { type RequestClient, transportClient } from './end-user.js';
import { sendError, toApiError } from './errors.js';
import { clientErrorHandler, frameworkErrorHandler } from './framework-errors.js';
import { type IdempotencyClaim, idempotencyHooks, type PendingIdempotency, type RouteIdempotency } from './idempotency.js';
import { checkRequestText } from './input-text.js';
import { lazyChildLoggerFactory } from './lazy-logger.js';
import { createHttpMetrics } from './metrics.js';
import { docsPageOptions, openApiOptions } from './openapi.js';
import { registerOpsRoutes } from './ops.routes.js';
import { traceRequests } from './request-tracing.js';
import { type RouteMethods, routeMethods } from './route-methods.js';
import type { DashboardAuthenticator, Principal, RouteCredential, SessionAuthenticator } from '../lib/principal.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import type { RouteModule } from '../lib/routes.js';
import { ErrorResponse } from '../lib/schemas.js';
import { validatorCompiler } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What credential the route takes; routes without one are public. */
    credential?: RouteCredential;
    /** False for operational routes (health checks) that must never be throttled. */
    rateLimited?: boolean;
    idempotency?: RouteIdempotency;
  }
  interface FastifyRequest {
    /** Set by the credential guard on every route that takes a credential. */
    principal: Principal | undefined;
    idempotency: PendingIdempotency | undefined;
    /** On routes whose key is a ledger movement's own key (`claim: 'movement'`): the key, checked, for the ledger to keep. */
    idempotencyClaim: IdempotencyClaim | undefined;
    /** Set by the credential guard when a secret key's request names its end user (`X-End-User-IP`, `X-End-User-Agent`). */
    endUser: RequestClient | undefined;
    /** Who is behind the request: the end user it names, else the connection. Rate limits, sessions and audit entries use it. */
    readonly client: RequestClient;
  }
}

export const BODY_BYTES_MAX = 1024 * 1024;

export interface AppDependencies {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly projects: ProjectsService;
  readonly rateLimiter: RateLimiter;
  readonly sessions: SessionAuthenticator;
  /** The registry `GET /metrics` serves; other modules (webhook delivery) add theirs to it. Default: a new one. */
  readonly metricsRegistry?: Registry;
  /** The dashboard's cookie sessions, accepted on secret-key routes; without it a cookie is no credential. */
  readonly dashboard?: DashboardAuthenticator;
  /** The service's keyring: idempotent responses are stored sealed with it. */
  readonly secrets: SecretBox;
}

/** The HTTP application with every cross-cutting concern attached, ready for `listen` or `inject`. */
export async function buildApp(deps: AppDependencies, routeModules: readonly RouteModule[] = []): Promise<FastifyInstance> {
  const { config } = deps;
  const deadline = requestDeadline(config.requestTimeoutMs);
  // Node's constructor would make headersTimeout no longer than requestTimeout, but Fastify sets
  // requestTimeout after it, leaving headersTimeout at 60 s; and with headersTimeout the longer of
  // the two, Node never cuts off a request whose headers have arrived but whose body has not.
  const serverOptions = { connectionsCheckingInterval: deadline.checkIntervalMs, headersTimeout: deadline.serverTimeoutMs };
  const tls =
    config.tls === undefined
      ? undefined
      : { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile), ...serverOptions };
  const app = Fastify({
    loggerInstance: deps.logger,
    childLoggerFactory: lazyChildLoggerFactory(deps.logger),
    // One log line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => newId('req'),
    bodyLimit: BODY_BYTES_MAX,
    trustProxy: config.trustProxy,
    // A body that stops short of its Content-Length would otherwise hold its connection and its
    // request for as long as the client keeps the socket open; clientErrorHandler answers 408.
    requestTimeout: deadline.serverTimeoutMs,
    http: serverOptions,
    // Fastify's own answer while closing is not in the catalog's shape; the onRequest hook below
    // answers those requests instead (Fastify still marks them `Connection: close`).
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // JSON.parse keeps `__proto__` and `constructor` as own keys, which the preValidation hook below
    // refuses as unknown parameters, naming them; Fastify's own check would call the body invalid JSON.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    ...(tls === undefined ? {} : { https: tls }),
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('principal', undefined);
  app.decorateRequest('idempotency', undefined);
  app.decorateRequest('idempotencyClaim', undefined);
  app.decorateRequest('endUser', undefined);
  app.decorateRequest('client', {
    getter(this: FastifyRequest): RequestClient {
      return this.endUser ?? transportClient(this);
    },
  });
  // JSON is the only body this API reads; a text/plain body is refused with 415, and so is JSON
  // that says it is in another character set than UTF-8 (RFC 8259 allows no other).
  app.removeContentTypeParser(['text/plain']);
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new ApiError('unsupported_media_type', `Send the body as UTF-8 JSON; charset=${charset} is not read.`), undefined);
      return;
    }
    // Decoding would turn bytes that are not UTF-8 into U+FFFD and let the body through altered;
    // `isUtf8` checks the bytes as they are, in one native pass.
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (!isUtf8(bytes)) {
      done(new ApiError('body_invalid_json', 'The request body is not valid UTF-8.'), undefined);
      return;
    }
    void parseJson(request, bytes.toString('utf8'), done);
  });

  const metrics = createHttpMetrics(deps.metricsRegistry);
  const guard = credentialGuard({
    projects: deps.projects,
    sessions: deps.sessions,
    rateLimiter: deps.rateLimiter,
    rateLimit: config.rateLimit,
    ...(deps.dashboard === undefined ? {} : { dashboard: deps.dashboard }),
  });
  // From the start of `close` (SIGTERM): requests already past onRequest finish; a request that
  // arrives later on a kept-alive connection is answered 503 and its connection closed, so that
  // the client sends it again elsewhere (CONTRACT 9.5, "Shutdown").
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Before the onRequest hook below, so that the credential guard's reads are in the request's span.
  const tracer = activeTracer();
  if (tracer !== undefined) traceRequests(app, tracer);
  // One onRequest hook for the headers every response carries and the credential guard: each hook
  // costs a trip through Fastify's hook runner on every request.
  app.addHook('onRequest', (request, reply) => {
    void reply.header('Request-Id', request.id);
    if (request.url.startsWith('/v1/')) void reply.header('Cache-Control', 'no-store');
    void reply.header('X-Content-Type-Options', 'nosniff');
    if (tls !== undefined) void reply.header('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    if (closing) {
      return Promise.reject(
        new ApiError('service_unavailable', 'The service is shutting down; send the request again on a new connection.', {
          headers: { Connection: 'close' },
        }),
      );
    }
    return guard(request, reply);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      checkRequestText(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  // Idempotency-Key applies to POST only, so its hooks are attached to POST routes alone, and not
  // to those that take no key (`idempotency: { mode: 'off' }`).
  const idempotency = idempotencyHooks({ db: deps.db, clock: deps.clock, secrets: deps.secrets });
  const routes = routeMethods();
  app.addHook('onRoute', (route) => {
    routes.add(route);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') || route.config?.idempotency?.mode === 'off') return;
    route.preHandler = [idempotency.preHandler, ...hookList(route.preHandler)];
    route.onSend = [idempotency.onSend, ...hookList(route.onSend)];
    route.onResponse = [idempotency.onResponse, ...hookList(route.onResponse)];
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
    request.log.info(
      { method: request.method, route, status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  });

  app.setErrorHandler((thrown, request, reply) => {
    if (connectionClosed(request, thrown)) {
      // The client hung up (or was cut off for being late): nothing is wrong with the service,
      // and no answer can reach anyone, so none is written.
      request.log.info({ code: (thrown as { code?: unknown }).code }, 'connection closed before the answer');
      return reply.hijack();
    }
    const error = isUnavailable(thrown)
      ? new ApiError('service_unavailable', 'The database is not reachable; retry later.', {
          cause: thrown,
          headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
        })
      : toApiError(thrown);
    if (error.status >= 500) request.log.error({ err: thrown, request_id: request.id }, 'request failed');
    return sendError(request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, unmatchedRoute(request, routes)));

  app.addSchema(ErrorResponse);
  await app.register(swagger, openApiOptions({ publicUrl: config.email.publicUrl }));
  await app.register(swaggerUi, docsPageOptions());

  registerOpsRoutes(app, { db: deps.db, metrics, metricsToken: config.metricsToken, production: config.nodeEnv === 'production' });
  for (const register of routeModules) register(app);
  await app.ready();
  return app;
}

/** 405 with `Allow` when the path exists under other methods, else 404. */
function unmatchedRoute(request: FastifyRequest, routes: RouteMethods): ApiError {
  const path = request.url.split('?')[0] ?? '';
  const allowed = routes.allowedFor(path);
  if (allowed === undefined || allowed.includes(request.method))
    return new ApiError('route_not_found', `No route ${request.method} ${path}.`);
  return new ApiError('method_not_allowed', `${path} takes ${allowed.join(', ')}, not ${request.method}.`, {
    headers: { Allow: allowed.join(', ') },
  });
}

/**
 * Node enforces `requestTimeout` by looking for late requests every `connectionsCheckingInterval`
 * (30 s unless told), so a request is cut off between the timeout and the timeout plus one
 * interval. Looking every tenth of the limit (at most each second) and giving Node the limit less
 * one interval cuts every late request off within `requestTimeoutMs`, never after.
 */
function requestDeadline(requestTimeoutMs: number): { serverTimeoutMs: number; checkIntervalMs: number } {
  const checkIntervalMs = Math.min(1000, Math.ceil(requestTimeoutMs / 10));
  return { serverTimeoutMs: requestTimeoutMs - checkIntervalMs, checkIntervalMs };
}

function hookList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** `Retry-After` of a 503 for a database that is not reachable: about the time a standby takes to be promoted. */
const DATABASE_RETRY_AFTER_SECONDS = 1;

/** What reading a request or writing its answer fails with once its connection is gone. */
const CONNECTION_CLOSED_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * Whether `thrown` is the request's own connection closing: one of those codes, on a socket that
 * is closed. The socket is what tells it apart from the same code coming from the database.
 */
function connectionClosed(request: FastifyRequest, thrown: unknown): boolean {
  const code = thrown !== null && typeof thrown === 'object' ? (thrown as { code?: unknown }).code : undefined;
  return typeof code === 'string' && CONNECTION_CLOSED_CODES.has(code) && request.raw.socket.destroyed;
}

/**
 * Errors that mean the database is down, switching to a standby or overloaded, not that the
 * request or the code is wrong (db/connection-errors.ts).
 */
function isUnavailable(thrown: unknown): boolean {
  if (thrown === null || typeof thrown !== 'object') return false;
  if (isHostLost(thrown)) return true;
  const code = (thrown as { code?: unknown }).code;
  return (
    code === '53300' || // too_many_connections
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
  );
}

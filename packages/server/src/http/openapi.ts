import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyRequest } from 'fastify';
import { ApiError, ERROR_CATALOG, type ErrorCode } from '../lib/errors.js';
import { sharedHeaderParameters } from './openapi-headers.js';
import { describedSuccesses, type SuccessResponse } from './openapi-successes.js';
import { eventWebhooks } from './openapi-webhooks.js';
import type { RouteCredential } from '../lib/principal.js';
import { SERVICE_VERSION } from '../version.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documentation only: the catalog codes this route refuses with beyond those every route of
     * its kind can answer (validation, credentials, idempotency, rate limit; see `routeErrorCodes`).
     * They become the operation's 4xx responses in `GET /v1/openapi.json`.
     */
    errors?: readonly ErrorCode[];
  }
}

/**
 * The OpenAPI document `GET /v1/openapi.json` serves (docs/api.md), generated from the route
 * schemas by @fastify/swagger. What every route shares is derived here once, from the same route
 * options the server enforces, so the document cannot drift from the behaviour:
 * - `security` from `config.credential`, the credential the guard demands (`[]` on public routes);
 * - the error responses from the credential, the schemas and the method, plus the route's own
 *   `schema.errors`, each described with the one `ErrorResponse` schema and its codes;
 * - the header parameters of its kind (`Idempotency-Key` on a POST, the end-user headers with a
 *   secret key: http/openapi-headers.ts);
 * - a description of each success response its schema left undescribed (http/openapi-successes.ts).
 * Each operation's own `description` and `summary` are written in its route file.
 * Each route names its own `operationId` in its schema (explicit names stay stable when a path
 * changes; the SDK's methods are generated from them). Redocly's recommended rules pass on the
 * result without an error or a warning, but for the two routes whose only success is a redirect
 * (packages/server/src/http/openapi.test.ts).
 */

/** The service's name as the README gives it; the document's `info.title` and the `/docs` page's title. */
export const API_TITLE = 'svc API';
/** The one URL the document is served at (docs/api.md); `/docs` loads it from there. */
export const OPENAPI_PATH = '/v1/openapi.json';
/** The API reference page, rendered by Swagger UI from `OPENAPI_PATH`. */
export const DOCS_PREFIX = '/docs';

const SECRET_KEY = [{ secretKey: [] }, { secretKeyHeader: [] }];
const SESSION_TOKEN = [{ sessionToken: [] }];
const SECURITY: Readonly<Record<RouteCredential, ReadonlyArray<Record<string, readonly string[]>>>> = {
  secret: SECRET_KEY,
  session: SESSION_TOKEN,
  any: [...SESSION_TOKEN, ...SECRET_KEY],
  public: [],
};

const CREDENTIAL_ERRORS: Readonly<Record<RouteCredential, readonly ErrorCode[]>> = {
  // A secret-key route also takes the dashboard's session cookie (docs/adr/0012-dashboard.md).
  secret: ['credential_missing', 'invalid_api_key', 'dashboard_session_invalid', 'secret_key_required', 'csrf_token_invalid'],
  session: ['credential_missing', 'session_invalid', 'session_expired', 'session_revoked', 'session_token_required'],
  any: [
    'credential_missing',
    'invalid_api_key',
    'dashboard_session_invalid',
    'session_invalid',
    'session_expired',
    'session_revoked',
    'csrf_token_invalid',
  ],
  public: [],
};

/** The extensions that carry a route's error responses and shared headers from `transform` to `transformObject`. */
const ERRORS_EXTENSION = 'x-svc-errors';
const HEADERS_EXTENSION = 'x-svc-headers';
const ERROR_SCHEMA = { $ref: '#/components/schemas/ErrorResponse' };
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'The request is malformed',
  401: 'No valid credential',
  403: 'The credential may not do this',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'The body is too large',
  415: 'The body is not JSON',
  422: 'Refused',
};

interface RouteShape {
  readonly method: string | readonly string[];
  readonly credential: RouteCredential;
  readonly rateLimited: boolean;
  readonly idempotent: boolean;
  readonly schema: {
    readonly body?: unknown;
    readonly querystring?: unknown;
    readonly params?: unknown;
    readonly headers?: unknown;
    readonly errors?: readonly ErrorCode[];
  };
}

/** The catalog codes a route can answer, by what the credential guard, the parsers and the hooks do with it. */
export function routeErrorCodes(route: RouteShape): ErrorCode[] {
  const methods = typeof route.method === 'string' ? [route.method] : route.method;
  const post = methods.includes('POST');
  const takesBody = route.schema.body !== undefined || methods.some((method) => ['POST', 'PUT', 'PATCH'].includes(method));
  const codes = new Set<ErrorCode>();
  if (route.schema.body !== undefined) codes.add('body_invalid_json');
  if (route.schema.body !== undefined || route.schema.querystring !== undefined || route.schema.params !== undefined) {
    codes.add('parameter_missing').add('parameter_invalid').add('parameter_unknown');
  }
  if (route.schema.headers !== undefined) codes.add('parameter_invalid');
  for (const code of CREDENTIAL_ERRORS[route.credential]) codes.add(code);
  if (route.schema.params !== undefined) codes.add('resource_missing');
  if (post && route.idempotent) codes.add('parameter_invalid').add('idempotency_key_in_use').add('idempotency_key_reused');
  if (takesBody) codes.add('body_too_large').add('unsupported_media_type');
  for (const code of route.schema.errors ?? []) codes.add(code);
  return [...codes];
}

/** One response per 4xx status; 429, 500 and 503 refer to shared components (they read the same everywhere). */
function errorResponses(codes: readonly ErrorCode[], rateLimited: boolean): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (status === 429 || status >= 500) continue;
    const list = statusCodes.map((code) => `\`${code}\``).join(', ');
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Refused'}: ${list} (docs/errors.md).`,
      content: { 'application/json': { schema: ERROR_SCHEMA } },
    };
  }
  responses['4XX'] = { $ref: '#/components/responses/ProtocolError' };
  if (rateLimited || codes.includes('rate_limited')) responses['429'] = { $ref: '#/components/responses/RateLimited' };
  responses['500'] = { $ref: '#/components/responses/InternalError' };
  responses['503'] = { $ref: '#/components/responses/ServiceUnavailable' };
  return responses;
}

const SHARED_RESPONSES = {
  ProtocolError: {
    description:
      "Refused by Node's HTTP server before any route runs, without a JSON body: 400 for a request that is not HTTP, 408 when it is not received within 60 s, 431 when its headers are too large.",
  },
  RateLimited: {
    description: 'Too many requests: `rate_limited` (docs/errors.md). Retry after `Retry-After` seconds.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } },
    content: { 'application/json': { schema: ERROR_SCHEMA } },
  },
  InternalError: {
    description: 'A bug in the service, logged with the request id: `internal_error`.',
    content: { 'application/json': { schema: ERROR_SCHEMA } },
  },
  ServiceUnavailable: {
    description:
      'A component the service needs (the database) is unreachable, or the database is switching to its standby; retry after `Retry-After` seconds: `service_unavailable`.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } },
    content: { 'application/json': { schema: ERROR_SCHEMA } },
  },
};

type OpenApiObject = Record<string, unknown> & {
  paths?: Record<string, Record<string, Record<string, unknown>>>;
  components?: Record<string, unknown>;
};

export interface OpenApiOptions {
  /** The service's public base URL (`PUBLIC_URL`), the document's server. */
  readonly publicUrl: string;
}

/** The @fastify/swagger registration options. */
export function openApiOptions(options: OpenApiOptions): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version: SERVICE_VERSION,
        description:
          'Wallets with credits, authentication and sessions, organizations and signed webhooks. Conventions: docs/api.md; errors: docs/errors.md. ' +
          'A secret-key request made for an end user may carry `X-End-User-IP` and `X-End-User-Agent`: sessions, audit entries and ' +
          'log-in throttling then use them (ignored with a session token).',
        license: { name: 'UNLICENSED', identifier: 'LicenseRef-UNLICENSED' },
      },
      servers: [serverEntry(options.publicUrl)],
      webhooks: eventWebhooks(),
      components: {
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'A secret key, svc_sk_…' },
          secretKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A secret key, svc_sk_…' },
          sessionToken: { type: 'http', scheme: 'bearer', description: 'A session token, svc_ses_…' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the service was started with one.' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json['$id'] === 'string' ? json['$id'] : `def-${index}`),
    },
    transform: ({ schema, url, route }) => {
      if (schema === undefined || schema.hide === true) return { schema, url };
      const config = route.config ?? {};
      const credential = config.credential ?? 'public';
      const rateLimited = config.rateLimited !== false;
      const codes = routeErrorCodes({
        method: route.method,
        credential,
        rateLimited,
        idempotent: config.idempotency?.mode !== 'off',
        schema,
      });
      const rest = { ...schema };
      delete rest.errors;
      return {
        schema: {
          ...rest,
          [HEADERS_EXTENSION]: sharedHeaderParameters({ method: route.method, credential, idempotency: config.idempotency ?? {} }),
          // /metrics is public unless METRICS_TOKEN is set: no credential, or that bearer token.
          security: url === '/metrics' ? [{}, { metricsToken: [] }] : SECURITY[credential],
          [ERRORS_EXTENSION]: errorResponses(
            url === '/metrics' ? [...codes, 'credential_missing', 'metrics_token_invalid'] : codes,
            rateLimited,
          ),
        },
        url,
      };
    },
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) throw new Error('the document is OpenAPI 3, never Swagger 2');
      return withErrorResponses(documentObject.openapiObject as OpenApiObject);
    },
  };
}

/**
 * The @fastify/swagger-ui registration options of `/docs`. The plugin would serve the document a
 * second and third time (`/docs/json`, `/docs/yaml`) and point the page at the first of them; the
 * page is given `OPENAPI_PATH` instead (Swagger UI's `urls`, which it loads in place of `url`) and
 * those two routes answer 404 like any unknown path, so the document has one address.
 */
export function docsPageOptions(): FastifySwaggerUiOptions {
  const copies = new Set([`${DOCS_PREFIX}/json`, `${DOCS_PREFIX}/yaml`]);
  return {
    routePrefix: DOCS_PREFIX,
    theme: { title: API_TITLE },
    uiConfig: { urls: [{ url: OPENAPI_PATH, name: API_TITLE }] },
    uiHooks: {
      onRequest: (request: FastifyRequest, _reply, done) => {
        const route = request.routeOptions.url ?? '';
        if (copies.has(route)) {
          done(new ApiError('route_not_found', `No route ${request.method} ${route}; the OpenAPI document is at ${OPENAPI_PATH}.`));
          return;
        }
        done();
      },
    },
  };
}

/**
 * `PUBLIC_URL` when it names a host others can reach; for a loopback one (the default
 * `http://localhost:PORT`), `/`: the host the document was fetched from, which is then the same.
 */
export function serverEntry(publicUrl: string): { url: string; description: string } {
  const host = new URL(publicUrl).hostname;
  if (host === 'localhost' || host === '[::1]' || host.startsWith('127.')) {
    return { url: '/', description: 'The host serving this document (PUBLIC_URL is a loopback address).' };
  }
  return { url: publicUrl, description: 'PUBLIC_URL, the base URL the service is reached at.' };
}

/**
 * Moves each operation's error responses and shared headers from the extensions into `responses`
 * and `parameters`, and describes each success response that the route's schema left undescribed.
 */
function withErrorResponses(document: OpenApiObject): OpenApiObject {
  for (const item of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const { [ERRORS_EXTENSION]: errors, [HEADERS_EXTENSION]: headers, ...rest } = operation;
      if (errors === undefined) continue;
      const parameters = [...((operation['parameters'] as unknown[] | undefined) ?? []), ...((headers as unknown[] | undefined) ?? [])];
      item[method] = {
        ...rest,
        ...(parameters.length === 0 ? {} : { parameters }),
        responses: {
          ...describedSuccesses(operation['responses'] as Record<string, SuccessResponse>),
          ...(errors as Record<string, unknown>),
        },
      };
    }
  }
  document.components = { ...document.components, responses: SHARED_RESPONSES };
  return document;
}

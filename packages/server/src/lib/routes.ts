import type { Static, TSchema } from '@sinclair/typebox';
import type {
  FastifyContextConfig,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RouteOptions,
} from 'fastify';
import type { ErrorCode } from './errors.js';
import type { RouteCredential } from './principal.js';

/**
 * The contract between the HTTP application (`http/app.ts`) and the modules' route files: a module
 * exports functions returning `RouteModule`s, and the application registers them. Route files use
 * only this, `lib/principal.ts` and `lib/schemas.ts`, never `http/` (a lint rule in
 * eslint.config.js keeps `modules/` out of `http/`; docs/architecture.md).
 */
export type RouteModule = (app: FastifyInstance) => void;

/**
 * CORS for the routes an end user's browser calls with a session token (`CORS_ORIGINS`); built by
 * `http/cors.ts` and handed to the modules whose routes take session tokens.
 */
export interface BrowserAccess {
  /** A route-level onSend hook: lets allowed origins read the response, errors included. */
  readonly onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
  /** Registers the preflight of one session route; nothing when no origin is configured. */
  readonly preflight: (app: FastifyInstance, url: string, methods: readonly string[]) => void;
}

/**
 * A route-level `preValidation` hook for session routes that change how the user signs in (a
 * passkey, an authenticator, the password): it refuses with 403 `reauthentication_required` unless
 * the session signed in or reauthenticated within `REAUTH_WINDOW_SECONDS`. Built by the auth
 * module from the sessions service. It runs before the body is validated and before an
 * `Idempotency-Key` is claimed, so a refused request can be sent again, with the same key, once the
 * user has reauthenticated.
 */
export type RecentAuthenticationGuard = (request: FastifyRequest) => Promise<void>;

/** What a request schema validates to: its TypeBox type, or `unknown` for a part the route does not take. */
type Validated<S> = S extends TSchema ? Static<S> : unknown;

/** The request a route's handler gets, typed by its schemas. */
export type RouteRequest<P = undefined, Q = undefined, B = undefined> = FastifyRequest<{
  Params: Validated<P>;
  Querystring: Validated<Q>;
  Body: Validated<B>;
}>;

/** A body parser of its own for one route (the SAML form post), registered in a scope of its own. */
export interface RouteBodyParser {
  readonly contentType: string;
  readonly bodyLimit: number;
  readonly parse: (text: string) => unknown;
}

/**
 * One route, said once: where it is, what credential it takes, what it is in the OpenAPI document
 * (docs/api.md), its schemas and its handler. `registerRoutes` turns it into Fastify's route options;
 * the OpenAPI `security` and error responses are derived from `credential` by `http/openapi.ts`.
 */
export interface RouteSpec<P, Q, B> {
  readonly method: Extract<HTTPMethods, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>;
  readonly url: string;
  readonly credential: RouteCredential;
  /** How the route takes `Idempotency-Key` (POST only; `http/idempotency.ts`); a request key by default. */
  readonly idempotency?: FastifyContextConfig['idempotency'];
  /** False for operational routes (health checks) that are never throttled. */
  readonly rateLimited?: false;
  /** Left out of the OpenAPI document (the dashboard's own routes). */
  readonly hide?: true;
  /** The operation's name in the OpenAPI document, which the SDK's methods are generated from. */
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  /** The catalog codes this route refuses with beyond those of every route of its kind (`http/openapi.ts`). */
  readonly errors?: readonly ErrorCode[];
  /** The OpenAPI tags, when not the module's one. */
  readonly tags?: readonly string[];
  readonly params?: P;
  readonly querystring?: Q;
  readonly body?: B;
  /** The body's media types in the document, when not JSON. */
  readonly consumes?: readonly string[];
  /** The answer's media types in the document, when not JSON. */
  readonly produces?: readonly string[];
  readonly response?: FastifySchema['response'];
  /** A session route an end user's browser calls: CORS on its answers, and its preflight. */
  readonly browser?: BrowserAccess;
  /** The body may be left out: a missing one is read as `{}` before validation. */
  readonly bodyOptional?: true;
  /** Runs before the body is validated and before an `Idempotency-Key` is claimed. */
  readonly preValidation?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** A body parser of this route alone; the route then registers in a Fastify scope of its own. */
  readonly bodyParser?: RouteBodyParser;
  readonly handler: (request: RouteRequest<P, Q, B>, reply: FastifyReply) => unknown;
}

/** A route as `registerRoutes` takes it, its handler's request typing erased. */
export type RouteDeclaration = RouteSpec<unknown, unknown, unknown>;

/** Declares a route; its handler's request is typed by the TypeBox schemas of its params, query and body. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): RouteDeclaration {
  return spec;
}

/** The methods in the order a preflight's `Access-Control-Allow-Methods` lists them. */
const METHOD_ORDER: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Registers a module's routes in the order given, each tagged `tag` in the OpenAPI document unless
 * it names its tags, then the CORS preflight of each URL that has browser routes, with their methods.
 */
export function registerRoutes(app: FastifyInstance, tag: string, routes: readonly RouteDeclaration[]): void {
  const preflights = new Map<string, { browser: BrowserAccess; methods: string[] }>();
  for (const route of routes) {
    const options = routeOptions(tag, route);
    const parser = route.bodyParser;
    if (parser === undefined) app.route(options);
    else void app.register(scopedRoute(options, parser));
    if (route.browser === undefined) continue;
    const preflight = preflights.get(route.url) ?? { browser: route.browser, methods: [] };
    preflight.methods.push(route.method);
    preflights.set(route.url, preflight);
  }
  for (const [url, { browser, methods }] of preflights) {
    browser.preflight(
      app,
      url,
      [...methods].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)),
    );
  }
}

/** A module's routes as the application registers them (`RouteModule`). */
export function routeModule(tag: string, routes: readonly RouteDeclaration[]): RouteModule {
  return (app) => registerRoutes(app, tag, routes);
}

function routeOptions(tag: string, route: RouteDeclaration): RouteOptions {
  const schema: Record<string, unknown> = route.hide === true ? { hide: true } : { tags: route.tags ?? [tag] };
  for (const key of [
    'operationId',
    'summary',
    'description',
    'errors',
    'params',
    'querystring',
    'body',
    'consumes',
    'produces',
    'response',
  ] as const) {
    if (route[key] !== undefined) schema[key] = route[key];
  }
  const config: FastifyContextConfig = { credential: route.credential };
  if (route.rateLimited !== undefined) config.rateLimited = route.rateLimited;
  if (route.idempotency !== undefined) config.idempotency = route.idempotency;
  const preValidation = [
    ...(route.bodyOptional === true ? [emptyBody] : []),
    ...(route.preValidation === undefined ? [] : [route.preValidation]),
  ];
  return {
    method: route.method,
    url: route.url,
    config,
    schema: schema,
    ...(preValidation.length === 0 ? {} : { preValidation }),
    ...(route.browser === undefined ? {} : { onSend: route.browser.onSend }),
    ...(route.bodyParser === undefined ? {} : { bodyLimit: route.bodyParser.bodyLimit }),
    handler: route.handler as RouteOptions['handler'],
  };
}

/** `bodyOptional`: no body reads as `{}`. */
async function emptyBody(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

function scopedRoute(options: RouteOptions, parser: RouteBodyParser) {
  return (scope: FastifyInstance, _options: unknown, done: (error?: Error) => void) => {
    scope.addContentTypeParser(parser.contentType, { parseAs: 'string', bodyLimit: parser.bodyLimit }, (_request, text, parsed) => {
      parsed(null, parser.parse(text as string));
    });
    scope.route(options);
    done();
  };
}

import { SessionJwtError } from '../errors.js';
import { createSessionJwtVerifier, type SessionJwtClaims, type SessionJwtVerifier, type SessionJwtVerifierOptions } from './verifier.js';

/**
 * Session JWT checks for Express (and Connect or plain node:http), Fastify and Next.js route
 * handlers. The frameworks are typed by the few members used, so the SDK depends on none of them.
 *
 * The token is read from `Authorization: Bearer <jwt>`, else from the cookie named `cookieName`.
 * A refusal answers 401 with the service's error shape, `{ error: { type, code, message } }`:
 * `code` is `credential_missing` when no token came, else the `SessionJwtError` code. When the
 * key set cannot be fetched (`jwks_unavailable`) the answer is 503: the token was not checked,
 * and a client that took 401 for "signed out" would drop a session that may be good.
 */
export interface SessionMiddlewareOptions extends SessionJwtVerifierOptions {
  /** A cookie to read the JWT from when there is no `Authorization` header. */
  readonly cookieName?: string;
  /** A verifier to share (its caches) between several middlewares; default one made from these options. */
  readonly verifier?: SessionJwtVerifier;
}

type HeaderValue = string | readonly string[] | undefined;

/** The parts of an Express or node:http request this reads and writes. */
export interface ExpressLikeRequest {
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The verified claims, set before `next()`. Not `req.session`: express-session owns that name. */
  svcSession?: SessionJwtClaims;
}

/** The parts of an Express or node:http response this uses (node's own methods, which Express keeps). */
export interface ExpressLikeResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

export type ExpressLikeMiddleware = (request: ExpressLikeRequest, response: ExpressLikeResponse, next: (error?: unknown) => void) => void;

/** `app.use(sessionJwtMiddleware({ baseUrl, projectId }))`; then `req.svcSession` holds the claims. */
export function sessionJwtMiddleware(options: SessionMiddlewareOptions): ExpressLikeMiddleware {
  const verifier = options.verifier ?? createSessionJwtVerifier(options);
  return (request, response, next) => {
    void authenticate(verifier, tokenFrom(request.headers['authorization'], request.headers['cookie'], options.cookieName)).then(
      (outcome) => {
        if ('claims' in outcome) {
          request.svcSession = outcome.claims;
          next();
          return;
        }
        response.statusCode = outcome.status;
        for (const [name, value] of Object.entries(outcome.headers)) response.setHeader(name, value);
        response.end(JSON.stringify(outcome.body));
      },
      next,
    );
  };
}

/** The parts of a Fastify request and reply this uses. */
export interface FastifyLikeRequest {
  readonly headers: Readonly<Record<string, HeaderValue>>;
  svcSession?: SessionJwtClaims;
}

export interface FastifyLikeReply {
  code(statusCode: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(payload: unknown): FastifyLikeReply;
}

/**
 * An `onRequest` or `preHandler` hook: `app.addHook('onRequest', sessionJwtHook({ baseUrl, projectId }))`
 * for every route, or `{ onRequest: hook }` on some. Then `request.svcSession` holds the claims.
 */
export function sessionJwtHook(
  options: SessionMiddlewareOptions,
): (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<FastifyLikeReply | undefined> {
  const verifier = options.verifier ?? createSessionJwtVerifier(options);
  return async (request, reply) => {
    const outcome = await authenticate(
      verifier,
      tokenFrom(request.headers['authorization'], request.headers['cookie'], options.cookieName),
    );
    if ('claims' in outcome) {
      request.svcSession = outcome.claims;
      return undefined;
    }
    reply.code(outcome.status);
    for (const [name, value] of Object.entries(outcome.headers)) reply.header(name, value);
    // An async hook that answers returns the reply: Fastify then runs neither later hooks nor the route.
    return reply.send(outcome.body);
  };
}

/**
 * Wraps a Next.js App Router route handler: `export const GET = withSession(async (request, context, session) => …, options)`.
 * The handler runs only for a verified token and gets its claims third. Needs the Node.js runtime
 * (`export const runtime = 'nodejs'`, the default), not the edge one: verification uses node:crypto.
 */
export function withSession<Context>(
  handler: (request: Request, context: Context, session: SessionJwtClaims) => Response | Promise<Response>,
  options: SessionMiddlewareOptions,
): (request: Request, context: Context) => Promise<Response> {
  const verifier = options.verifier ?? createSessionJwtVerifier(options);
  return async (request, context) => {
    const token = tokenFrom(
      request.headers.get('authorization') ?? undefined,
      request.headers.get('cookie') ?? undefined,
      options.cookieName,
    );
    const outcome = await authenticate(verifier, token);
    if ('claims' in outcome) return handler(request, context, outcome.claims);
    return new Response(JSON.stringify(outcome.body), {
      status: outcome.status,
      headers: { 'content-type': 'application/json', ...outcome.headers },
    });
  };
}

type Outcome =
  | { readonly claims: SessionJwtClaims }
  | {
      readonly status: 401 | 503;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: { readonly error: { readonly type: string; readonly code: string; readonly message: string } };
    };

/** Verifies and turns a refusal into the answer every framework sends; anything but a refusal is rethrown. */
async function authenticate(verifier: SessionJwtVerifier, token: string | undefined): Promise<Outcome> {
  if (token === undefined) return refusal(401, 'credential_missing', 'No session JWT: send Authorization: Bearer <jwt>.', 'Bearer');
  try {
    return { claims: await verifier.verify(token) };
  } catch (error) {
    if (!(error instanceof SessionJwtError)) throw error;
    if (error.code === 'jwks_unavailable') return refusal(503, error.code, error.message);
    return refusal(401, error.code, error.message, 'Bearer error="invalid_token"');
  }
}

/** `challenge` is the WWW-Authenticate of a 401 (RFC 6750 3): without an error when no token came at all. */
function refusal(status: 401 | 503, code: string, message: string, challenge?: string): Outcome {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (challenge !== undefined) headers['www-authenticate'] = challenge;
  const type = status === 401 ? 'authentication_error' : 'api_error';
  return { status, headers, body: { error: { type, code, message } } };
}

/** The JWT from `Authorization: Bearer`, else from the named cookie. */
export function tokenFrom(authorization: HeaderValue, cookie: HeaderValue, cookieName: string | undefined): string | undefined {
  const header = typeof authorization === 'string' ? authorization : undefined;
  const bearer = header === undefined ? undefined : /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header)?.[1];
  if (bearer !== undefined) return bearer;
  if (cookieName === undefined || typeof cookie !== 'string') return undefined;
  for (const pair of cookie.split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0 && pair.slice(0, separator).trim() === cookieName) return pair.slice(separator + 1).trim() || undefined;
  }
  return undefined;
}

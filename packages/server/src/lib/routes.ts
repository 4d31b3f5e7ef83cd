import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

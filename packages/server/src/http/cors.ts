import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserAccess } from '../lib/routes.js';

/** What a browser may send and read on the session-token routes. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key';
const EXPOSED_HEADERS = 'Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for the routes an end user's browser calls with a session token (`CORS_ORIGINS`, docs/api.md
 * section 7). Only those routes answer preflights; secret-key routes never do, so a browser can
 * never be made to send a secret key cross-origin. `*` in the list allows every origin. No cookies
 * are involved (the token travels in `Authorization`), so credentials are not allowed.
 */
export function browserAccess(origins: readonly string[]): BrowserAccess {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  const allowedOrigin = (request: FastifyRequest): string | undefined => {
    const origin = request.headers.origin;
    if (origin === undefined || origin === '') return undefined;
    return anyOrigin || allowed.has(origin) ? origin : undefined;
  };

  return {
    /** A route-level onSend hook: lets allowed origins read the response, errors included. */
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
      const origin = allowedOrigin(request);
      void reply.header('Vary', 'Origin');
      if (origin !== undefined) {
        void reply.header('Access-Control-Allow-Origin', origin);
        void reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      }
      return payload;
    },

    /** Registers the preflight of one session route; nothing when no origin is configured. */
    preflight: (app: FastifyInstance, url: string, methods: readonly string[]): void => {
      if (origins.length === 0) return;
      app.options(url, { config: { credential: 'public' }, schema: { hide: true } }, (request, reply) => {
        const origin = allowedOrigin(request);
        void reply.header('Vary', 'Origin');
        if (origin !== undefined) {
          void reply.header('Access-Control-Allow-Origin', origin);
          void reply.header('Access-Control-Allow-Methods', methods.join(', '));
          void reply.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
          void reply.header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
        }
        return reply.code(204).send();
      });
    },
  };
}

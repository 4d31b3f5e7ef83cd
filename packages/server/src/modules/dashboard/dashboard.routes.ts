import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { readCookie } from '../../lib/cookies.js';
import { StrictObject } from '../../lib/schemas.js';
import { ApiError } from '../../lib/errors.js';
import { DASHBOARD_SESSION_TTL_MS, DASHBOARD_SIGNED_IN_COOKIE_NAME, type DashboardService } from './dashboard.service.js';
import type { DashboardFiles, StaticFile } from './dashboard.static.js';

const SignInBody = StrictObject({ secret_key: Type.String({ minLength: 1, maxLength: 200 }) });
const SessionSchema = Type.Object({
  csrf_token: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
  project_id: Type.String(),
  key_id: Type.String(),
});

/** The page and its assets: hashed assets are immutable for a year; index.html is revalidated every time. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/**
 * The page runs only its own scripts and talks only to this origin; uPlot sets styles through the
 * CSSOM, which `style-src 'self'` allows. No framing (clickjacking on the action buttons).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

const NOT_BUILT_PAGE =
  '<!doctype html><meta charset="utf-8"><title>Dashboard not built</title>' +
  '<p>The dashboard has not been built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it) and restart.</p>';

export interface DashboardRoutesOptions {
  readonly dashboard: DashboardService;
  readonly files: DashboardFiles;
  /** Marks the cookie Secure: always, unless the service is plainly local (see `dashboardCookieSecure`). */
  readonly secureCookie: boolean;
}

/**
 * `/dashboard`: the built page, and `/dashboard/api/session`, where a pasted secret key becomes a
 * cookie session (docs/adr/0012-dashboard.md). Every other call of the page goes to `/v1` with that
 * cookie, through the credential guard.
 */
export function dashboardRoutes(options: DashboardRoutesOptions): RouteModule {
  const { dashboard, files, secureCookie } = options;
  const secure = secureCookie ? '; Secure' : '';
  // The session's cookie, then the marker the page reads to know it may be signed in (no secret in it).
  const cookies = (value: string, maxAgeSeconds: number) => [
    `${dashboard.cookieName}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`,
    `${DASHBOARD_SIGNED_IN_COOKIE_NAME}=${value === '' ? '' : '1'}; Path=/; Max-Age=${maxAgeSeconds}; SameSite=Strict${secure}`,
  ];
  const page = (request: FastifyRequest, reply: FastifyReply) => {
    if (files.index === undefined)
      return reply.code(404).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(NOT_BUILT_PAGE);
    void reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    void reply.header('X-Frame-Options', 'DENY');
    void reply.header('Referrer-Policy', 'no-referrer');
    return sendFile(request, reply, files.index, REVALIDATE);
  };

  return routeModule('dashboard', [
    defineRoute({
      method: 'POST',
      url: '/dashboard/api/session',
      credential: 'public',
      hide: true,
      body: SignInBody,
      response: { 201: SessionSchema },
      handler: async (request, reply) => {
        const { token, session } = await dashboard.signIn({
          secretKey: request.body.secret_key,
          ip: request.ip,
          userAgent: request.headers['user-agent'],
          origin: request.headers.origin,
          host: request.host,
        });
        return reply
          .code(201)
          .header('Cache-Control', 'no-store')
          .header('Set-Cookie', cookies(token, DASHBOARD_SESSION_TTL_MS / 1000))
          .send(session);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/dashboard/api/session',
      credential: 'public',
      hide: true,
      response: { 200: SessionSchema },
      handler: async (request, reply) => {
        const session = await dashboard.describe(requireCookie(request, dashboard.cookieName));
        return reply.header('Cache-Control', 'no-store').send(session);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/dashboard/api/session',
      credential: 'public',
      hide: true,
      handler: async (request, reply) => {
        const csrf = request.headers['x-csrf-token'];
        await dashboard.signOut({
          token: requireCookie(request, dashboard.cookieName),
          csrfToken: Array.isArray(csrf) ? csrf[0] : csrf,
          origin: request.headers.origin,
          host: request.host,
          changes: true,
        });
        return reply.code(204).header('Cache-Control', 'no-store').header('Set-Cookie', cookies('', 0)).send();
      },
    }),
    defineRoute({ method: 'GET', url: '/dashboard', credential: 'public', hide: true, handler: page }),
    defineRoute({
      method: 'GET',
      url: '/dashboard/*',
      credential: 'public',
      hide: true,
      handler: (request, reply) => {
        const path = (request.params as { '*': string })['*'];
        const file = files.files.get(path);
        if (file !== undefined) return sendFile(request, reply, file, path.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
        // A missing asset is a 404, not the page: a stale index.html must not get HTML for its script.
        if (path.startsWith('assets/') || path.startsWith('api/'))
          throw new ApiError('route_not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`);
        // Any other path is one of the page's own routes (/dashboard/wallets/wlt_…): the page decides.
        return page(request, reply);
      },
    }),
  ]);
}

function requireCookie(request: FastifyRequest, name: string): string {
  const value = readCookie(request.headers.cookie, name);
  if (value === undefined) throw new ApiError('dashboard_session_invalid', 'Not signed in to the dashboard; sign in with a secret key.');
  return value;
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile, cacheControl: string): FastifyReply {
  void reply.header('Cache-Control', cacheControl).header('Vary', 'Accept-Encoding').type(file.contentType);
  const acceptEncoding = request.headers['accept-encoding'] ?? '';
  if (file.gzipped !== undefined && /\bgzip\b/.test(acceptEncoding)) return reply.header('Content-Encoding', 'gzip').send(file.gzipped);
  return reply.send(file.body);
}

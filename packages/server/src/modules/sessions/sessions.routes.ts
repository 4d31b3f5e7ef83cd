import { type BrowserAccess, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { type AuditContext, auditContext } from '../audit/audit.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { type User, UserParams } from '../users/users.schemas.js';
import {
  type IssuedSession,
  type SessionInfo,
  ListSessionsQuery,
  RefreshSessionBody,
  RevokedSessionsSchema,
  SessionInfoSchema,
  SessionListSchema,
  SessionParams,
  UserAndSessionSchema,
  InvalidSessionResponse,
  JwksSchema,
  ProjectJwksParams,
  SessionJwtSchema,
  SigningKeyInfoSchema,
  SigningKeyListSchema,
  ValidateSessionBody,
  ValidateSessionResponse,
  ValidSessionResponse,
} from './sessions.schemas.js';
import type { SessionCheck, SessionClient, SessionsService } from './sessions.service.js';

/**
 * What these routes need of the auth service, which answers with the user beside the session and
 * checks that the user exists (`AuthService`, handed over by auth.module.ts). Declared here, so that
 * sessions does not depend on auth, which opens sessions through the sessions service.
 */
export interface UserSessions {
  validate(
    projectId: string,
    token: string,
  ): Promise<{ valid: true; user: User; session: SessionInfo; jwt: string } | Extract<SessionCheck, { valid: false }>>;
  refresh(
    projectId: string,
    refreshToken: string,
    client: SessionClient,
    context: AuditContext,
  ): Promise<{ readonly user: User; readonly session: IssuedSession }>;
  listUserSessions(
    projectId: string,
    userId: string,
    query: { limit?: number | undefined; starting_after?: string | undefined },
  ): ReturnType<SessionsService['listForUser']>;
  revokeUserSessions(
    projectId: string,
    userId: string,
    context: AuditContext,
  ): Promise<{ object: 'list'; data: SessionInfo[]; has_more: false }>;
}

/**
 * HTTP only: `/v1/sessions/*` and a user's sessions, with a secret key; a session's JWT, with the
 * session; the project's JWKS, public; and rotating the project's signing key.
 */
export function sessionsRoutes(
  auth: UserSessions,
  sessions: SessionsService,
  options: { browser: BrowserAccess; projects: ProjectsService },
): RouteModule {
  return routeModule('sessions', [
    defineRoute({
      method: 'POST',
      url: '/v1/sessions/jwt',
      credential: 'session',
      // Only reads: a replayed answer would be a JWT of a session perhaps revoked since.
      idempotency: { mode: 'off' },
      operationId: 'createSessionJwt',
      summary: "A fresh short-lived JWT of the presented session, to verify offline against the project's JWKS",
      description:
        "A fresh JWT of the presented session, signed with the project's current key and valid until the earlier of `SESSION_JWT_TTL_SECONDS` and the session's own expiry. A revoked or expired session is refused at once.",
      response: { 200: SessionJwtSchema },
      browser: options.browser,
      handler: (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'session') throw new Error('POST /v1/sessions/jwt ran without a session principal');
        return sessions.jwtFor(principal);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/projects/:project_id/jwks.json',
      credential: 'public',
      operationId: 'getProjectJwks',
      summary: "The project's public keys that sign session JWTs (RFC 7517); no credential",
      description:
        "The public keys (RFC 7517) that sign the project's session JWTs, to verify them offline; never a private part. Needs no credential; an unknown project is 404.",
      errors: ['resource_missing'],
      params: ProjectJwksParams,
      response: { 200: JwksSchema },
      handler: async (request, reply) => {
        const projectId = request.params.project_id;
        await options.projects.getProject(projectId);
        // Five minutes: a verifier that meets an unknown kid fetches again (CONTRACT 9.3), and a
        // retired key stays published far longer than that (signing-keys.ts).
        void reply.header('Cache-Control', 'public, max-age=300');
        return sessions.publishedKeys(projectId);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/project/signing-keys',
      credential: 'secret',
      operationId: 'listSigningKeys',
      summary: "The project's published session JWT signing keys with their status (signing, next, retiring); public halves only",
      description:
        "The project's session JWT signing keys that the JWKS publishes, public halves only: the one signing now, the next, and those retiring until every JWT they signed has expired.",
      response: { 200: SigningKeyListSchema },
      handler: (request) => sessions.listSigningKeys(requireSecretKey(request).projectId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/project/signing-keys/rotate',
      credential: 'secret',
      operationId: 'rotateSigningKey',
      summary: "Make the project's next session JWT signing key sign from now on; the previous stays published until its JWTs expire",
      description:
        'Makes the next key, published since the last rotation, sign new session JWTs from now on, and makes a new next key. The previous key stays in the JWKS until every JWT it signed has expired.',
      response: { 200: SigningKeyInfoSchema },
      handler: (request) => sessions.rotateSigningKey(requireSecretKey(request).projectId, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sessions/validate',
      credential: 'secret',
      // A POST that only reads: no Idempotency-Key (a replayed answer would outlive a revocation).
      idempotency: { mode: 'off' },
      operationId: 'validateSession',
      summary: 'Check a session token: `{valid: true, user, session}` or `{valid: false, reason}`; never 404',
      description:
        'Checks a session token on the server: `{valid: true, user, session, jwt}`, or `{valid: false, reason}` for an expired, revoked or unknown one (a token of another project is `not_found`). Never 404; use it where a revocation must count at once.',
      body: ValidateSessionBody,
      response: { 200: ValidateSessionResponse },
      handler: async (request, reply) => {
        const result = await auth.validate(requireSecretKey(request).projectId, request.body.session_id);
        // The answer's own branch, compiled once: the union's serializer first tries each branch
        // against the value with a validator (4 to 8 us a call, against 1.5 to 2 us; docs/performance.md).
        const schema = result.valid ? ValidSessionResponse : InvalidSessionResponse;
        return reply.serializer(reply.compileSerializationSchema(schema, '200')).send(result);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sessions/refresh',
      credential: 'secret',
      // The response carries a new session and refresh token: kept for replay only sealed (http/idempotency.sealing.ts).
      operationId: 'refreshSession',
      summary: 'Exchange a refresh token (single use) for a new session',
      description:
        'Exchanges a refresh token for a new session and a new refresh token; the old session is revoked (reason `refreshed`). A refresh token is single use: presenting a used one revokes its whole refresh chain and is 401 `refresh_token_reused`.',
      errors: ['refresh_token_invalid', 'refresh_token_reused', 'user_banned'],
      body: RefreshSessionBody,
      response: { 200: UserAndSessionSchema },
      handler: (request) =>
        auth.refresh(requireSecretKey(request).projectId, request.body.refresh_token, request.client, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/sessions/:id/revoke',
      credential: 'secret',
      operationId: 'revokeSession',
      summary: 'Revoke a session (reason `revoked`)',
      description:
        'Revokes one session of the project (reason `revoked`); its token and refresh token stop working at once. Emits `session.revoked`.',
      params: SessionParams,
      response: { 200: SessionInfoSchema },
      handler: (request) =>
        sessions.revoke(requireSecretKey(request).projectId, request.params.id, 'revoked', { param: 'id', audit: auditContext(request) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/users/:id/sessions',
      credential: 'secret',
      operationId: 'listUserSessions',
      summary: "A user's sessions that can still be used or refreshed, newest first",
      description:
        "The user's sessions that can still be used or refreshed, newest first, with address, user agent, creation and last use.",
      params: UserParams,
      querystring: ListSessionsQuery,
      response: { 200: SessionListSchema },
      handler: (request) => auth.listUserSessions(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/users/:id/sessions/revoke',
      credential: 'secret',
      operationId: 'revokeUserSessions',
      summary: 'Revoke every session of a user (reason `revoked`)',
      description: 'Revokes every session of the user (reason `revoked`) and answers them.',
      params: UserParams,
      response: { 200: RevokedSessionsSchema },
      handler: (request) => auth.revokeUserSessions(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
  ]);
}

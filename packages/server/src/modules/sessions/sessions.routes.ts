import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { AuthService } from '../auth/auth.service.js';
import { UserParams } from '../users/users.schemas.js';
import {
  ListSessionsQuery,
  RefreshSessionBody,
  RevokedSessionsSchema,
  SessionInfoSchema,
  SessionListSchema,
  SessionParams,
  UserAndSessionSchema,
  InvalidSessionResponse,
  ValidateSessionBody,
  ValidateSessionResponse,
  ValidSessionResponse,
} from './sessions.schemas.js';
import type { SessionsService } from './sessions.service.js';

const tags = ['sessions'];
const security = [{ secretKey: [] }, { secretKeyHeader: [] }];

type WithId = FastifyRequest<{ Params: { id: string } }>;

/** HTTP only: `/v1/sessions/*` and a user's sessions, all with a secret key. */
export function sessionsRoutes(auth: AuthService, sessions: SessionsService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/sessions/validate',
      {
        // A POST that only reads: no Idempotency-Key (a replayed answer would outlive a revocation).
        config: { credential: 'secret', idempotency: { mode: 'off' } },
        schema: {
          operationId: 'validateSession',
          tags,
          security,
          summary: 'Check a session token: `{valid: true, user, session}` or `{valid: false, reason}`; never 404',
          body: ValidateSessionBody,
          response: { 200: ValidateSessionResponse },
        },
      },
      async (request, reply) => {
        const result = await auth.validate(
          requireSecretKey(request).projectId,
          (request.body as Static<typeof ValidateSessionBody>).session_id,
        );
        // The answer's own branch, compiled once: the union's serializer first tries each branch
        // against the value with a validator (4 to 8 us a call, against 1.5 to 2 us; docs/performance.md).
        const schema = result.valid ? ValidSessionResponse : InvalidSessionResponse;
        return reply.serializer(reply.compileSerializationSchema(schema, '200')).send(result);
      },
    );

    app.post(
      '/v1/sessions/refresh',
      {
        // The response carries a new session and refresh token: kept for replay only sealed (http/idempotency.sealing.ts).
        config: { credential: 'secret' },
        schema: {
          operationId: 'refreshSession',
          errors: ['refresh_token_invalid', 'refresh_token_reused', 'user_banned'],
          tags,
          security,
          summary: 'Exchange a refresh token (single use) for a new session',
          body: RefreshSessionBody,
          response: { 200: UserAndSessionSchema },
        },
      },
      (request) =>
        auth.refresh(
          requireSecretKey(request).projectId,
          (request.body as Static<typeof RefreshSessionBody>).refresh_token,
          request.client,
          auditContext(request),
        ),
    );

    app.post(
      '/v1/sessions/:id/revoke',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'revokeSession',
          tags,
          security,
          summary: 'Revoke a session (reason `revoked`)',
          params: SessionParams,
          response: { 200: SessionInfoSchema },
        },
      },
      (request: WithId) =>
        sessions.revoke(requireSecretKey(request).projectId, request.params.id, 'revoked', { param: 'id', audit: auditContext(request) }),
    );

    app.get(
      '/v1/users/:id/sessions',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listUserSessions',
          tags,
          security,
          summary: "A user's sessions that can still be used or refreshed, newest first",
          params: UserParams,
          querystring: ListSessionsQuery,
          response: { 200: SessionListSchema },
        },
      },
      (request: WithId) =>
        auth.listUserSessions(requireSecretKey(request).projectId, request.params.id, request.query as Static<typeof ListSessionsQuery>),
    );

    app.post(
      '/v1/users/:id/sessions/revoke',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'revokeUserSessions',
          tags,
          security,
          summary: 'Revoke every session of a user (reason `revoked`)',
          params: UserParams,
          response: { 200: RevokedSessionsSchema },
        },
      },
      (request: WithId) => auth.revokeUserSessions(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );
  };
}

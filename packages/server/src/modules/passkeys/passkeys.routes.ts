import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BrowserAccess, RecentAuthenticationGuard, RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import { LoginQuery, LoginTokenResponse, sendSignIn } from '../mfa/mfa.schemas.js';
import { UserAndSessionSchema } from '../sessions/sessions.schemas.js';
import {
  DeletedPasskeySchema,
  ListPasskeysQuery,
  PasskeyListSchema,
  PasskeyParams,
  PasskeySchema,
  RegisterPasskeyBody,
  RegistrationOptionsSchema,
  SignInBody,
  SignInOptionsBody,
  SignInOptionsSchema,
  UserParams,
  UserPasskeyParams,
} from './passkeys.schemas.js';
import type { PasskeysService } from './passkeys.service.js';
import type { PasskeySignIn } from './passkeys.sign-in.js';

const tags = ['passkeys'];
const secretKeySecurity = [{ secretKey: [] }, { secretKeyHeader: [] }];
const sessionSecurity = [{ sessionToken: [] }];
const notConfigured = ['webauthn_not_configured'] as const;

type ListQuery = Static<typeof ListPasskeysQuery>;

/** The session's user: the credential guard guarantees a session principal on `session` routes. */
function sessionUser(request: FastifyRequest): { projectId: string; userId: string } {
  const principal = request.principal;
  if (principal?.kind !== 'session') throw new Error('a session route ran without a session principal');
  return { projectId: principal.projectId, userId: principal.userId };
}

/** HTTP only: a user's passkeys (session token), the project's view of them (secret key), and passkey sign-in. */
export function passkeysRoutes(
  passkeys: PasskeysService,
  signIn: PasskeySignIn,
  options: {
    browser: BrowserAccess;
    /** Adding a passkey needs a recent sign-in or reauthentication: a stolen session must not plant a way in. */
    requireRecentAuthentication: RecentAuthenticationGuard;
  },
): RouteModule {
  const { browser, requireRecentAuthentication } = options;
  return (app: FastifyInstance) => {
    app.post(
      '/v1/users/me/passkeys/options',
      {
        config: { credential: 'session' },
        onSend: browser.onSend,
        preValidation: requireRecentAuthentication,
        schema: {
          operationId: 'createPasskeyRegistrationOptions',
          errors: [...notConfigured, 'reauthentication_required'],
          tags,
          security: sessionSecurity,
          summary: "Creation options for a new passkey of the session's user",
          description: 'Pass them to `navigator.credentials.create()`; the challenge is single use and lives 5 minutes.',
          response: { 200: RegistrationOptionsSchema },
        },
      },
      (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.registrationOptions(projectId, userId);
      },
    );
    browser.preflight(app, '/v1/users/me/passkeys/options', ['POST']);

    app.post(
      '/v1/users/me/passkeys',
      {
        config: { credential: 'session' },
        onSend: browser.onSend,
        preValidation: requireRecentAuthentication,
        schema: {
          operationId: 'registerPasskey',
          description:
            "Registers a passkey for the session's user from the authenticator's answer to the creation options. Needs a recent sign-in. A credential registered in the project already is 409 `passkey_already_registered`. Emits `user.passkey.added`.",
          errors: [
            ...notConfigured,
            'reauthentication_required',
            'passkey_challenge_invalid',
            'passkey_challenge_expired',
            'passkey_verification_failed',
            'passkey_already_registered',
          ],
          tags,
          security: sessionSecurity,
          summary: "Register a passkey for the session's user with the authenticator's response",
          body: RegisterPasskeyBody,
          response: { 201: PasskeySchema },
        },
      },
      async (request, reply) => {
        const { projectId, userId } = sessionUser(request);
        const passkey = await passkeys.register(projectId, userId, request.body as RegisterPasskeyBody, auditContext(request));
        return reply.code(201).send(passkey);
      },
    );

    app.get(
      '/v1/users/me/passkeys',
      {
        config: { credential: 'session' },
        onSend: browser.onSend,
        schema: {
          operationId: 'listMyPasskeys',
          description: "The session user's passkeys, newest first.",
          tags,
          security: sessionSecurity,
          summary: "The session user's passkeys, newest first",
          querystring: ListPasskeysQuery,
          response: { 200: PasskeyListSchema },
        },
      },
      (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.list(projectId, userId, request.query as ListQuery);
      },
    );
    browser.preflight(app, '/v1/users/me/passkeys', ['GET', 'POST']);

    app.delete(
      '/v1/users/me/passkeys/:id',
      {
        config: { credential: 'session' },
        onSend: browser.onSend,
        schema: {
          operationId: 'deleteMyPasskey',
          description: "Removes one of the session user's passkeys: it signs no one in any more. Emits `user.passkey.removed`.",
          tags,
          security: sessionSecurity,
          summary: "Remove one of the session user's passkeys; it signs no one in any more",
          params: PasskeyParams,
          response: { 200: DeletedPasskeySchema },
        },
      },
      (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.remove(projectId, userId, (request.params as Static<typeof PasskeyParams>).id, auditContext(request));
      },
    );
    browser.preflight(app, '/v1/users/me/passkeys/:id', ['DELETE']);

    app.get(
      '/v1/users/:id/passkeys',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listUserPasskeys',
          description: "A user's passkeys, newest first, as the operator sees them.",
          tags,
          security: secretKeySecurity,
          summary: "A user's passkeys, newest first",
          params: UserParams,
          querystring: ListPasskeysQuery,
          response: { 200: PasskeyListSchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string } }>) =>
        passkeys.list(requireSecretKey(request).projectId, request.params.id, request.query as ListQuery),
    );

    app.delete(
      '/v1/users/:id/passkeys/:passkey_id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'deleteUserPasskey',
          description: "Removes one of a user's passkeys, for a lost device: it signs no one in any more. Emits `user.passkey.removed`.",
          tags,
          security: secretKeySecurity,
          summary: "Remove one of a user's passkeys (a lost device, an operator's reset)",
          params: UserPasskeyParams,
          response: { 200: DeletedPasskeySchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string; passkey_id: string } }>) =>
        passkeys.remove(requireSecretKey(request).projectId, request.params.id, request.params.passkey_id, auditContext(request)),
    );

    app.post(
      '/v1/auth/passkey/options',
      {
        config: { credential: 'secret' },
        // The body is optional (no email: a discoverable sign-in): a missing one is read as {}.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
        schema: {
          operationId: 'createPasskeySignInOptions',
          errors: [...notConfigured],
          tags: ['auth', ...tags],
          security: secretKeySecurity,
          summary: 'Request options for a passkey sign-in, with their `challenge_id`',
          description:
            "With `email`, only that user's passkeys may answer; without it, any discoverable passkey of the project. The challenge is single use and lives 5 minutes.",
          body: SignInOptionsBody,
          response: { 200: SignInOptionsSchema },
        },
      },
      (request) => signIn.options(requireSecretKey(request).projectId, request.body as SignInOptionsBody, request.client),
    );

    app.post(
      '/v1/auth/passkey',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'signInWithPasskey',
          errors: [...notConfigured, 'passkey_challenge_invalid', 'passkey_challenge_expired', 'passkey_invalid', 'user_banned'],
          tags: ['auth', ...tags],
          security: secretKeySecurity,
          summary: "Sign in with a passkey: the authenticator's answer to the sign-in options",
          description:
            'Answers as log in does: shape A `{user, session}`, or shape B with `?format=token`. A passkey sign-in satisfies multi-factor authentication.',
          querystring: LoginQuery,
          body: SignInBody,
          response: { 200: { anyOf: [UserAndSessionSchema, LoginTokenResponse] } },
        },
      },
      async (request, reply) => {
        const result = await signIn.signIn(
          requireSecretKey(request).projectId,
          request.body as SignInBody,
          request.client,
          auditContext(request),
        );
        return sendSignIn(reply, result, (request.query as Static<typeof LoginQuery>).format);
      },
    );
  };
}

import type { FastifyRequest } from 'fastify';
import { type BrowserAccess, type RecentAuthenticationGuard, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
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

const notConfigured = ['webauthn_not_configured'] as const;

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
  return routeModule('passkeys', [
    defineRoute({
      method: 'POST',
      url: '/v1/users/me/passkeys/options',
      credential: 'session',
      operationId: 'createPasskeyRegistrationOptions',
      summary: "Creation options for a new passkey of the session's user",
      description: 'Pass them to `navigator.credentials.create()`; the challenge is single use and lives 5 minutes.',
      errors: [...notConfigured, 'reauthentication_required'],
      response: { 200: RegistrationOptionsSchema },
      browser,
      preValidation: requireRecentAuthentication,
      handler: (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.registrationOptions(projectId, userId);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/users/me/passkeys',
      credential: 'session',
      operationId: 'registerPasskey',
      summary: "Register a passkey for the session's user with the authenticator's response",
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
      body: RegisterPasskeyBody,
      response: { 201: PasskeySchema },
      browser,
      preValidation: requireRecentAuthentication,
      handler: async (request, reply) => {
        const { projectId, userId } = sessionUser(request);
        const passkey = await passkeys.register(projectId, userId, request.body, auditContext(request));
        return reply.code(201).send(passkey);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/users/me/passkeys',
      credential: 'session',
      operationId: 'listMyPasskeys',
      summary: "The session user's passkeys, newest first",
      description: "The session user's passkeys, newest first.",
      querystring: ListPasskeysQuery,
      response: { 200: PasskeyListSchema },
      browser,
      handler: (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.list(projectId, userId, request.query);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/users/me/passkeys/:id',
      credential: 'session',
      operationId: 'deleteMyPasskey',
      summary: "Remove one of the session user's passkeys; it signs no one in any more",
      description: "Removes one of the session user's passkeys: it signs no one in any more. Emits `user.passkey.removed`.",
      params: PasskeyParams,
      response: { 200: DeletedPasskeySchema },
      browser,
      handler: (request) => {
        const { projectId, userId } = sessionUser(request);
        return passkeys.remove(projectId, userId, request.params.id, auditContext(request));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/users/:id/passkeys',
      credential: 'secret',
      operationId: 'listUserPasskeys',
      summary: "A user's passkeys, newest first",
      description: "A user's passkeys, newest first, as the operator sees them.",
      params: UserParams,
      querystring: ListPasskeysQuery,
      response: { 200: PasskeyListSchema },
      handler: (request) => passkeys.list(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/users/:id/passkeys/:passkey_id',
      credential: 'secret',
      operationId: 'deleteUserPasskey',
      summary: "Remove one of a user's passkeys (a lost device, an operator's reset)",
      description: "Removes one of a user's passkeys, for a lost device: it signs no one in any more. Emits `user.passkey.removed`.",
      params: UserPasskeyParams,
      response: { 200: DeletedPasskeySchema },
      handler: (request) =>
        passkeys.remove(requireSecretKey(request).projectId, request.params.id, request.params.passkey_id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/passkey/options',
      credential: 'secret',
      operationId: 'createPasskeySignInOptions',
      summary: 'Request options for a passkey sign-in, with their `challenge_id`',
      description:
        "With `email`, only that user's passkeys may answer; without it, any discoverable passkey of the project. The challenge is single use and lives 5 minutes.",
      errors: [...notConfigured],
      tags: ['auth', 'passkeys'],
      body: SignInOptionsBody,
      response: { 200: SignInOptionsSchema },
      // The body is optional (no email: a discoverable sign-in): a missing one is read as {}.
      bodyOptional: true,
      handler: (request) => signIn.options(requireSecretKey(request).projectId, request.body, request.client),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/passkey',
      credential: 'secret',
      operationId: 'signInWithPasskey',
      summary: "Sign in with a passkey: the authenticator's answer to the sign-in options",
      description:
        'Answers as log in does: shape A `{user, session}`, or shape B with `?format=token`. A passkey sign-in satisfies multi-factor authentication.',
      errors: [...notConfigured, 'passkey_challenge_invalid', 'passkey_challenge_expired', 'passkey_invalid', 'user_banned'],
      tags: ['auth', 'passkeys'],
      querystring: LoginQuery,
      body: SignInBody,
      response: { 200: { anyOf: [UserAndSessionSchema, LoginTokenResponse] } },
      handler: async (request, reply) => {
        const result = await signIn.signIn(requireSecretKey(request).projectId, request.body, request.client, auditContext(request));
        return sendSignIn(reply, result, request.query.format);
      },
    }),
  ]);
}

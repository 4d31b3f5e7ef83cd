import type { FastifyReply, FastifyRequest } from 'fastify';
import { type BrowserAccess, type RecentAuthenticationGuard, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { type AuditContext, auditContext } from '../audit/audit.service.js';
import { isApiError } from '../../lib/errors.js';
import type { SessionClient } from '../sessions/sessions.service.js';
import { LogoutBody, UserAndSessionSchema } from '../sessions/sessions.schemas.js';
import { UserSchema } from '../users/users.schemas.js';
import { escapeHtml } from '../../lib/html.js';
import { AcceptedSchema } from '../../lib/schemas.js';
import { LoginQuery, sendSignIn, SignInResponse } from '../mfa/mfa.schemas.js';
import {
  ChangePasswordBody,
  ForgotPasswordBody,
  LoginBody,
  ReauthenticateBody,
  ReauthenticationSchema,
  ResendVerificationBody,
  ResetPasswordBody,
  SignupBody,
  VerifyEmailBody,
  VerifyEmailQuery,
} from './auth.schemas.js';
import type { AuthService } from './auth.service.js';
import { type Reauthentication, reauthenticationProof } from './reauthentication.js';

/** Where a new session is created from: the end user a secret key's request names, else the connection. */
export function sessionClient(request: FastifyRequest): SessionClient {
  return request.client;
}

export interface AuthRoutesOptions {
  readonly browser: BrowserAccess;
  /** Where the verification page sends the browser after verifying, instead of showing a page. */
  readonly emailVerifiedRedirectUrl: string | undefined;
  readonly reauthentication: Reauthentication;
  /** Refuses a session that has not signed in or reauthenticated lately (changing the password). */
  readonly requireRecentAuthentication: RecentAuthenticationGuard;
}

/** The session principal of a session route; the credential guard guarantees one. */
function sessionPrincipalOf(request: FastifyRequest, route: string) {
  const principal = request.principal;
  if (principal?.kind !== 'session') throw new Error(`${route} ran without a session principal`);
  return principal;
}

/** HTTP only: `/v1/auth/*` (email and password; OAuth and SSO are another module's). */
export function authRoutes(auth: AuthService, options: AuthRoutesOptions): RouteModule {
  return routeModule('auth', [
    defineRoute({
      method: 'POST',
      url: '/v1/auth/signup',
      credential: 'secret',
      operationId: 'signUp',
      summary: 'Sign up with email and password; sends the verification email',
      description:
        'Creates a user with an email address and a password (8 to 128 characters, none on the list of breached passwords) and signs them in: the user and a new session. Sends the verification email; an address already in use is 409 `email_taken`.',
      errors: ['email_taken', 'password_too_weak'],
      body: SignupBody,
      response: { 201: UserAndSessionSchema },
      handler: async (request, reply) => {
        const result = await auth.signup(requireSecretKey(request).projectId, request.body, request.client, auditContext(request));
        return reply.code(201).send(result);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/login',
      credential: 'secret',
      operationId: 'logIn',
      summary: 'Log in with email and password',
      description:
        'Shape A `{user, session}` by default; shape B `{session, user: {id, email}, expires_at, refresh_token}` with `?format=token`. ' +
        'A user with an active second factor gets `{mfa_required: true, mfa_token, methods}` and no session: finish with `POST /v1/auth/mfa/verify`.',
      errors: ['invalid_credentials', 'user_banned'],
      querystring: LoginQuery,
      body: LoginBody,
      response: { 200: SignInResponse },
      handler: async (request, reply) => {
        const result = await auth.login(requireSecretKey(request).projectId, request.body, request.client, auditContext(request));
        return sendSignIn(reply, result, request.query.format);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/logout',
      credential: 'any',
      operationId: 'logOut',
      summary: 'End a session: the presented one, or with a secret key the one in `session_id`',
      description:
        'Ends a session: with a session token, the one presented; with a secret key, the one named in `session_id`. Emits `session.revoked` with reason `logout`.',
      body: LogoutBody,
      response: { 204: { type: 'null', description: 'Ended.' } },
      browser: options.browser,
      // The body is optional here (a session needs none): a missing one is read as {}.
      bodyOptional: true,
      handler: async (request, reply) => {
        const principal = request.principal;
        if (principal === undefined) throw new Error('logout ran without a principal');
        await auth.logout(principal, request.body.session_id, auditContext(request));
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/verify-email',
      credential: 'secret',
      operationId: 'verifyEmail',
      summary: 'Verify an email address with the token from the email',
      description:
        'Marks the address verified with the single-use token from the verification email (valid 24 hours) and answers the user. Emits `user.email_verified`.',
      errors: ['token_invalid', 'token_expired'],
      body: VerifyEmailBody,
      response: { 200: UserSchema },
      handler: (request) => auth.verifyEmail(requireSecretKey(request).projectId, request.body.token, auditContext(request)),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/auth/verify-email',
      credential: 'public',
      operationId: 'openEmailVerificationLink',
      summary: 'The link in the verification email: verifies, then shows a small page or redirects',
      description:
        "The page the verification email links to: it verifies the address with the link's token, then redirects to the project's configured URL or shows a small page saying whether it worked. Needs no credential.",
      errors: ['token_invalid', 'token_expired'],
      querystring: VerifyEmailQuery,
      produces: ['text/html'],
      response: {
        200: {
          description: 'A small page saying that the address is verified; without a configured redirect URL.',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
        303: {
          type: 'null',
          description: "Verified: the browser is sent on to the project's configured URL (`Location`).",
          headers: { Location: { type: 'string', description: 'Where the browser goes next.' } },
        },
      },
      handler: (request, reply) => verificationPage(auth, options, request.query.token, reply, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/verify-email/send',
      credential: 'secret',
      operationId: 'sendVerificationEmail',
      summary: 'Send the verification email again (rate limited)',
      description: "Sends the user's verification email again; rate limited.",
      body: ResendVerificationBody,
      response: { 202: AcceptedSchema },
      handler: async (request, reply) => {
        await auth.resendVerification(requireSecretKey(request).projectId, request.body.user_id, auditContext(request));
        return reply.code(202).send({ accepted: true });
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/password/forgot',
      credential: 'secret',
      operationId: 'forgotPassword',
      summary: 'Send a password reset email; answers 202 whether or not the account exists',
      description:
        'Sends a password reset email with a single-use token valid 1 hour. Answers 202 whether or not an account has the address, so the answer tells nothing about who has one.',
      body: ForgotPasswordBody,
      response: { 202: AcceptedSchema },
      handler: async (request, reply) => {
        await auth.forgotPassword(requireSecretKey(request).projectId, request.body.email, auditContext(request));
        return reply.code(202).send({ accepted: true });
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/password/reset',
      credential: 'secret',
      operationId: 'resetPassword',
      summary: "Set a new password with the reset email's token; revokes every session of the user",
      description: 'Sets a new password with the token of the reset email and revokes every session of the user (reason `password_reset`).',
      errors: ['token_invalid', 'token_expired', 'password_too_weak'],
      body: ResetPasswordBody,
      response: { 200: UserSchema },
      handler: (request) => auth.resetPassword(requireSecretKey(request).projectId, request.body, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/password/change',
      credential: 'session',
      operationId: 'changePassword',
      summary: "Change the session user's password, given the current one; the user's other sessions are revoked",
      description:
        "Changes the session user's password, given the current one, and revokes the user's other sessions. Needs a recent sign-in or reauthentication (403 `reauthentication_required`).",
      errors: ['reauthentication_required', 'invalid_credentials', 'password_too_weak'],
      body: ChangePasswordBody,
      response: { 200: UserSchema },
      browser: options.browser,
      preValidation: options.requireRecentAuthentication,
      handler: (request) => {
        const principal = sessionPrincipalOf(request, 'password change');
        return auth.changePassword(principal, request.body, request.client, auditContext(request));
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/users/me/reauthenticate',
      credential: 'session',
      operationId: 'reauthenticate',
      summary: 'Prove again who the session user is, with the password or a second factor, before a sensitive change',
      description:
        "Send exactly one of `password`, `code` (authenticator) or `recovery_code`. Adding a passkey, enrolling or removing an authenticator and changing the password need a sign-in or reauthentication within `REAUTH_WINDOW_SECONDS` (403 `reauthentication_required`). Wrong answers count against log in's throttle for the user's email.",
      errors: ['invalid_credentials', 'mfa_code_invalid', 'mfa_not_enabled'],
      body: ReauthenticateBody,
      response: { 200: ReauthenticationSchema },
      browser: options.browser,
      handler: (request) =>
        options.reauthentication.reauthenticate(
          sessionPrincipalOf(request, 'reauthenticate'),
          reauthenticationProof(request.body),
          request.client,
          auditContext(request),
        ),
    }),
  ]);
}

/** The page behind the email's link. It shows only fixed text: nothing from the request is echoed. */
async function verificationPage(
  auth: AuthService,
  options: AuthRoutesOptions,
  token: string,
  reply: FastifyReply,
  context: AuditContext,
): Promise<FastifyReply> {
  let refusal: 'token_invalid' | 'token_expired' | undefined;
  try {
    await auth.verifyEmail(undefined, token, context);
  } catch (error) {
    if (!isApiError(error) || (error.code !== 'token_invalid' && error.code !== 'token_expired')) throw error;
    refusal = error.code;
  }
  if (refusal === undefined && options.emailVerifiedRedirectUrl !== undefined) return reply.redirect(options.emailVerifiedRedirectUrl, 303);
  const [title, message] =
    refusal === undefined
      ? ['Email verified', 'Thank you: your email address is verified. You can close this page.']
      : refusal === 'token_expired'
        ? ['Link expired', 'This verification link has expired. Ask the application for a new one.']
        : ['Link not valid', 'This verification link is not valid or was already used.'];
  void reply.code(refusal === undefined ? 200 : 400);
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>` +
    `</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
  return reply
    .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .header('Referrer-Policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(html);
}

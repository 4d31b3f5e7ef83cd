import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BrowserAccess, RecentAuthenticationGuard, RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { ApiError } from '../../lib/errors.js';
import { auditContext } from '../audit/audit.service.js';
import { AcceptedSchema } from '../../lib/schemas.js';
import type { SessionPrincipal } from '../sessions/sessions.service.js';
import { UserParams } from '../users/users.schemas.js';
import type { EmailCodesService } from './email-codes.service.js';
import {
  EmailCodeBody,
  EmailCodeVerifyBody,
  LoginQuery,
  MfaStatusSchema,
  MfaVerifyBody,
  sendSignIn,
  SignInResponse,
  TotpActivationSchema,
  TotpCodeBody,
  TotpDisableBody,
  TotpEnrolmentSchema,
} from './mfa.schemas.js';
import type { MfaService } from './mfa.service.js';
import type { FactorProof } from './second-factor.js';
import type { SignInGate } from './sign-in-gate.js';

const secretKeySecurity = [{ secretKey: [] }, { secretKeyHeader: [] }];
const sessionSecurity = [{ sessionToken: [] }];

export interface MfaRoutesOptions {
  readonly mfa: MfaService;
  readonly gate: SignInGate;
  readonly emailCodes: EmailCodesService;
  readonly browser: BrowserAccess;
  /** Enrolling, confirming and removing an authenticator need a recent sign-in or reauthentication. */
  readonly requireRecentAuthentication: RecentAuthenticationGuard;
}

function sessionPrincipal(request: FastifyRequest): SessionPrincipal {
  const principal = request.principal;
  if (principal?.kind !== 'session') throw new Error(`${request.url} ran without a session principal`);
  return principal;
}

/** HTTP only: second factors (`/v1/users/me/mfa/*`, `/v1/users/{id}/mfa`, `/v1/auth/mfa/verify`) and email codes. */
export function mfaRoutes(options: MfaRoutesOptions): RouteModule {
  const { mfa, gate, emailCodes, browser } = options;
  return (app: FastifyInstance) => {
    const session = { config: { credential: 'session' as const }, onSend: browser.onSend };
    const recentSession = { ...session, preValidation: options.requireRecentAuthentication };

    app.get(
      '/v1/users/me/mfa',
      {
        ...session,
        schema: {
          operationId: 'getMyMfa',
          description:
            "The session user's second factors: the authenticator's status, the recovery codes left and the methods a sign-in asks for. Never a secret.",
          tags: ['mfa'],
          security: sessionSecurity,
          summary: "The session user's second factors",
          response: { 200: MfaStatusSchema },
        },
      },
      (request) => {
        const principal = sessionPrincipal(request);
        return mfa.status(principal.projectId, principal.userId);
      },
    );
    browser.preflight(app, '/v1/users/me/mfa', ['GET']);

    app.post(
      '/v1/users/me/mfa/totp',
      {
        ...recentSession,
        schema: {
          operationId: 'enrollTotp',
          description:
            'Starts enrolling an authenticator app: a new base32 secret and its `otpauth://` URI for a QR code, pending until a code confirms it. Replaces a pending enrolment; with an active authenticator it is 409 `mfa_already_enabled`. Needs a recent sign-in.',
          errors: ['reauthentication_required', 'mfa_already_enabled'],
          tags: ['mfa'],
          security: sessionSecurity,
          summary: 'Start enrolling an authenticator app: a new secret, pending until a code confirms it',
          response: { 201: TotpEnrolmentSchema },
        },
      },
      async (request, reply) => {
        const principal = sessionPrincipal(request);
        return reply.code(201).send(await mfa.enrol(principal.projectId, principal.userId, auditContext(request)));
      },
    );

    app.post(
      '/v1/users/me/mfa/totp/verify',
      {
        ...recentSession,
        schema: {
          operationId: 'confirmTotp',
          description:
            'Confirms a pending enrolment with a code of its secret: the authenticator becomes active, and the ten recovery codes are answered this once. Needs a recent sign-in. Emits `user.mfa.enabled`.',
          errors: ['reauthentication_required', 'mfa_code_invalid', 'mfa_not_enabled', 'mfa_already_enabled'],
          tags: ['mfa'],
          security: sessionSecurity,
          summary: 'Confirm the enrolment with a code: the authenticator becomes active; answers ten recovery codes, once',
          body: TotpCodeBody,
          response: { 200: TotpActivationSchema },
        },
      },
      (request) => {
        const principal = sessionPrincipal(request);
        const { code } = request.body as Static<typeof TotpCodeBody>;
        return mfa.confirm(principal.projectId, principal.userId, code, request.client, auditContext(request));
      },
    );

    app.delete(
      '/v1/users/me/mfa/totp',
      {
        ...recentSession,
        schema: {
          operationId: 'disableTotp',
          description:
            'Turns the authenticator off with a current code or an unused recovery code; the recovery codes and every sign-in waiting for a code go with it. Needs a recent sign-in. Emits `user.mfa.disabled`.',
          errors: ['reauthentication_required', 'mfa_code_invalid', 'mfa_not_enabled'],
          tags: ['mfa'],
          security: sessionSecurity,
          summary: 'Turn the authenticator off, with a current code or a recovery code; the recovery codes go with it',
          body: TotpDisableBody,
          response: { 200: MfaStatusSchema },
        },
      },
      async (request) => {
        const principal = sessionPrincipal(request);
        const { code } = request.body as Static<typeof TotpDisableBody>;
        await mfa.disable(principal.projectId, principal.userId, code, request.client, auditContext(request));
        return mfa.status(principal.projectId, principal.userId);
      },
    );
    browser.preflight(app, '/v1/users/me/mfa/totp', ['POST', 'DELETE']);
    browser.preflight(app, '/v1/users/me/mfa/totp/verify', ['POST']);

    app.get(
      '/v1/users/:id/mfa',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getUserMfa',
          description: "A user's second factors, as the operator sees them; never a secret.",
          tags: ['mfa'],
          security: secretKeySecurity,
          summary: "A user's second factors",
          params: UserParams,
          response: { 200: MfaStatusSchema },
        },
      },
      (request) => mfa.status(requireSecretKey(request).projectId, (request.params as Static<typeof UserParams>).id),
    );

    app.delete(
      '/v1/users/:id/mfa',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'resetUserMfa',
          description:
            "Resets a user's second factors, for a user who lost their device: the authenticator, its recovery codes and pending sign-ins are removed. Emits `user.mfa.disabled` when one was active.",
          tags: ['mfa'],
          security: secretKeySecurity,
          summary: "Reset a user's second factors (a lost phone): the authenticator, its recovery codes and pending sign-ins go",
          params: UserParams,
          response: { 200: MfaStatusSchema },
        },
      },
      (request) => mfa.reset(requireSecretKey(request).projectId, (request.params as Static<typeof UserParams>).id, auditContext(request)),
    );

    app.post(
      '/v1/auth/mfa/verify',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'verifyMfa',
          errors: ['mfa_code_invalid', 'mfa_token_invalid', 'user_banned'],
          tags: ['auth'],
          security: secretKeySecurity,
          summary: 'Finish a sign-in that answered `mfa_required`: the mfa_token and a code (or a recovery code) for the session',
          description: 'Shape A `{user, session}`; shape B with `?format=token`, as log in.',
          querystring: LoginQuery,
          body: MfaVerifyBody,
          response: { 200: SignInResponse },
        },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof MfaVerifyBody>;
        const result = await gate.verify(
          requireSecretKey(request).projectId,
          { mfaToken: body.mfa_token, proof: factorProof(body) },
          request.client,
          auditContext(request),
        );
        return sendSignIn(reply, result, (request.query as Static<typeof LoginQuery>).format);
      },
    );

    app.post(
      '/v1/auth/email-code',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'sendEmailCode',
          description:
            'Emails a 6-digit sign-in code, valid 10 minutes and single use. Answers 202 whatever the address, in the same time: the email goes only to an existing unbanned user, or to anyone with `create_user: true`.',
          tags: ['auth'],
          security: secretKeySecurity,
          summary: 'Email a 6-digit sign-in code; answers 202 whether or not the account exists',
          body: EmailCodeBody,
          response: { 202: AcceptedSchema },
        },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof EmailCodeBody>;
        await emailCodes.request(
          requireSecretKey(request).projectId,
          { email: body.email, createUser: body.create_user ?? false },
          request.client,
          auditContext(request),
        );
        return reply.code(202).send({ accepted: true });
      },
    );

    app.post(
      '/v1/auth/email-code/verify',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'verifyEmailCode',
          errors: ['email_code_invalid', 'user_banned', 'email_taken'],
          tags: ['auth'],
          security: secretKeySecurity,
          summary: 'Sign in with the emailed code; creates the user when the code was asked with `create_user: true`',
          description: 'Shape A `{user, session}` (shape B with `?format=token`), or `mfa_required` for a user with a second factor.',
          querystring: LoginQuery,
          body: EmailCodeVerifyBody,
          response: { 200: SignInResponse },
        },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof EmailCodeVerifyBody>;
        const result = await emailCodes.verify(requireSecretKey(request).projectId, body, request.client, auditContext(request));
        return sendSignIn(reply, result, (request.query as Static<typeof LoginQuery>).format);
      },
    );
  };
}

/** Exactly one of `code` and `recovery_code`. */
function factorProof(body: Static<typeof MfaVerifyBody>): FactorProof {
  if (body.code !== undefined && body.recovery_code !== undefined) {
    throw new ApiError('parameter_invalid', 'Send either code or recovery_code, not both.', { param: 'recovery_code' });
  }
  if (body.code !== undefined) return { code: body.code };
  if (body.recovery_code !== undefined) return { recoveryCode: body.recovery_code };
  throw new ApiError('parameter_missing', 'Send the code of the authenticator, or a recovery code.', { param: 'code' });
}

import type { Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { type BrowserAccess, type RecentAuthenticationGuard, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
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
  return routeModule('mfa', [
    defineRoute({
      method: 'GET',
      url: '/v1/users/me/mfa',
      credential: 'session',
      operationId: 'getMyMfa',
      summary: "The session user's second factors",
      description:
        "The session user's second factors: the authenticator's status, the recovery codes left and the methods a sign-in asks for. Never a secret.",
      response: { 200: MfaStatusSchema },
      browser,
      handler: (request) => {
        const principal = sessionPrincipal(request);
        return mfa.status(principal.projectId, principal.userId);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/users/me/mfa/totp',
      credential: 'session',
      operationId: 'enrollTotp',
      summary: 'Start enrolling an authenticator app: a new secret, pending until a code confirms it',
      description:
        'Starts enrolling an authenticator app: a new base32 secret and its `otpauth://` URI for a QR code, pending until a code confirms it. Replaces a pending enrolment; with an active authenticator it is 409 `mfa_already_enabled`. Needs a recent sign-in.',
      errors: ['reauthentication_required', 'mfa_already_enabled'],
      response: { 201: TotpEnrolmentSchema },
      browser,
      preValidation: options.requireRecentAuthentication,
      handler: async (request, reply) => {
        const principal = sessionPrincipal(request);
        return reply.code(201).send(await mfa.enrol(principal.projectId, principal.userId, auditContext(request)));
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      credential: 'session',
      operationId: 'confirmTotp',
      summary: 'Confirm the enrolment with a code: the authenticator becomes active; answers ten recovery codes, once',
      description:
        'Confirms a pending enrolment with a code of its secret: the authenticator becomes active, and the ten recovery codes are answered this once. Needs a recent sign-in. Emits `user.mfa.enabled`.',
      errors: ['reauthentication_required', 'mfa_code_invalid', 'mfa_not_enabled', 'mfa_already_enabled'],
      body: TotpCodeBody,
      response: { 200: TotpActivationSchema },
      browser,
      preValidation: options.requireRecentAuthentication,
      handler: (request) => {
        const principal = sessionPrincipal(request);
        const { code } = request.body;
        return mfa.confirm(principal.projectId, principal.userId, code, request.client, auditContext(request));
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/users/me/mfa/totp',
      credential: 'session',
      operationId: 'disableTotp',
      summary: 'Turn the authenticator off, with a current code or a recovery code; the recovery codes go with it',
      description:
        'Turns the authenticator off with a current code or an unused recovery code; the recovery codes and every sign-in waiting for a code go with it. Needs a recent sign-in. Emits `user.mfa.disabled`.',
      errors: ['reauthentication_required', 'mfa_code_invalid', 'mfa_not_enabled'],
      body: TotpDisableBody,
      response: { 200: MfaStatusSchema },
      browser,
      preValidation: options.requireRecentAuthentication,
      handler: async (request) => {
        const principal = sessionPrincipal(request);
        const { code } = request.body;
        await mfa.disable(principal.projectId, principal.userId, code, request.client, auditContext(request));
        return mfa.status(principal.projectId, principal.userId);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/users/:id/mfa',
      credential: 'secret',
      operationId: 'getUserMfa',
      summary: "A user's second factors",
      description: "A user's second factors, as the operator sees them; never a secret.",
      params: UserParams,
      response: { 200: MfaStatusSchema },
      handler: (request) => mfa.status(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/users/:id/mfa',
      credential: 'secret',
      operationId: 'resetUserMfa',
      summary: "Reset a user's second factors (a lost phone): the authenticator, its recovery codes and pending sign-ins go",
      description:
        "Resets a user's second factors, for a user who lost their device: the authenticator, its recovery codes and pending sign-ins are removed. Emits `user.mfa.disabled` when one was active.",
      params: UserParams,
      response: { 200: MfaStatusSchema },
      handler: (request) => mfa.reset(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/mfa/verify',
      credential: 'secret',
      operationId: 'verifyMfa',
      summary: 'Finish a sign-in that answered `mfa_required`: the mfa_token and a code (or a recovery code) for the session',
      description: 'Shape A `{user, session}`; shape B with `?format=token`, as log in.',
      errors: ['mfa_code_invalid', 'mfa_token_invalid', 'user_banned'],
      tags: ['auth'],
      querystring: LoginQuery,
      body: MfaVerifyBody,
      response: { 200: SignInResponse },
      handler: async (request, reply) => {
        const body = request.body;
        const result = await gate.verify(
          requireSecretKey(request).projectId,
          { mfaToken: body.mfa_token, proof: factorProof(body) },
          request.client,
          auditContext(request),
        );
        return sendSignIn(reply, result, request.query.format);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/email-code',
      credential: 'secret',
      operationId: 'sendEmailCode',
      summary: 'Email a 6-digit sign-in code; answers 202 whether or not the account exists',
      description:
        'Emails a 6-digit sign-in code, valid 10 minutes and single use. Answers 202 whatever the address, in the same time: the email goes only to an existing unbanned user, or to anyone with `create_user: true`.',
      tags: ['auth'],
      body: EmailCodeBody,
      response: { 202: AcceptedSchema },
      handler: async (request, reply) => {
        const body = request.body;
        await emailCodes.request(
          requireSecretKey(request).projectId,
          { email: body.email, createUser: body.create_user ?? false },
          request.client,
          auditContext(request),
        );
        return reply.code(202).send({ accepted: true });
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/email-code/verify',
      credential: 'secret',
      operationId: 'verifyEmailCode',
      summary: 'Sign in with the emailed code; creates the user when the code was asked with `create_user: true`',
      description: 'Shape A `{user, session}` (shape B with `?format=token`), or `mfa_required` for a user with a second factor.',
      errors: ['email_code_invalid', 'user_banned', 'email_taken'],
      tags: ['auth'],
      querystring: LoginQuery,
      body: EmailCodeVerifyBody,
      response: { 200: SignInResponse },
      handler: async (request, reply) => {
        const body = request.body;
        const result = await emailCodes.verify(requireSecretKey(request).projectId, body, request.client, auditContext(request));
        return sendSignIn(reply, result, request.query.format);
      },
    }),
  ]);
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

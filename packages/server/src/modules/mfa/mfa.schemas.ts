import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { StrictObject } from '../../lib/schemas.js';
import { UserAndSessionSchema } from '../sessions/sessions.schemas.js';
import type { SignInResult } from './sign-in-gate.js';

const Method = Type.Union([Type.Literal('totp'), Type.Literal('recovery_code')]);
const Email = Type.String({ minLength: 1, maxLength: 320 });
const Code = Type.String({ minLength: 1, maxLength: 64 });

export const MfaChallengeSchema = Type.Object(
  {
    mfa_required: Type.Literal(true),
    mfa_token: Type.String({
      description: '`svc_mfa_…`: send it with a code to `POST /v1/auth/mfa/verify` within 5 minutes; 5 wrong codes end it.',
    }),
    methods: Type.Array(Method, { description: 'What the user can finish with: `totp` (`code`) and `recovery_code`.' }),
  },
  { $id: 'MfaChallenge', description: 'The first factor was right; the user has a second factor, so no session yet.' },
);

export const TotpEnrolmentSchema = Type.Object(
  {
    secret: Type.String({ description: 'Base32, for typing into an authenticator app. Shown once.' }),
    otpauth_url: Type.String({ description: '`otpauth://totp/…`, for a QR code.' }),
    status: Type.Literal('pending'),
  },
  { $id: 'TotpEnrolment' },
);

export const TotpActivationSchema = Type.Object(
  {
    status: Type.Literal('active'),
    recovery_codes: Type.Array(Type.String(), {
      minItems: 10,
      maxItems: 10,
      description: 'Ten single-use codes, `xxxxx-xxxxx`. Shown once.',
    }),
  },
  { $id: 'TotpActivation' },
);

export const MfaStatusSchema = Type.Object(
  {
    object: Type.Literal('mfa'),
    user_id: Type.String(),
    totp: Type.Object({
      status: Type.Union([Type.Literal('none'), Type.Literal('pending'), Type.Literal('active')]),
      activated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    }),
    recovery_codes_left: Type.Integer({ minimum: 0 }),
    methods: Type.Array(Method),
  },
  { $id: 'MfaStatus', description: "A user's second factors; never a secret." },
);

export const TotpCodeBody = StrictObject({
  code: Type.String({ minLength: 1, maxLength: 16, description: 'A 6-digit code of the authenticator.' }),
});
export const TotpDisableBody = StrictObject({
  code: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'A current 6-digit code of the authenticator, or one of the recovery codes.',
  }),
});

export const MfaVerifyBody = StrictObject({
  mfa_token: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.Optional(Code),
  recovery_code: Type.Optional(Code),
});

export const EmailCodeBody = StrictObject({
  email: Email,
  create_user: Type.Optional(
    Type.Boolean({ description: 'Create the user (email verified) at verification when nobody has the address.' }),
  ),
});

export const EmailCodeVerifyBody = StrictObject({ email: Email, code: Type.String({ minLength: 1, maxLength: 16 }) });

// What a sign-in answers, wherever it happens (password, passkey, provider, second factor): the
// sign-in gate (sign-in-gate.ts) decides between a session and the second-factor challenge.

export const LoginQuery = StrictObject({
  format: Type.Optional(
    Type.Literal('token', { description: '`token` answers in shape B: `{session, user: {id, email}, expires_at, refresh_token}`.' }),
  ),
});

/** Log in, shape B (`?format=token`), exactly as the interface document gives it. */
export const LoginTokenResponse = Type.Object(
  {
    session: Type.String({ description: 'The session token.' }),
    user: Type.Object({ id: Type.String(), email: Type.String() }),
    expires_at: Type.String({ format: 'date-time' }),
    refresh_token: Type.String(),
    jwt: Type.String({ description: 'A short-lived JWT of the session, as `session.jwt` in shape A.' }),
  },
  { $id: 'LoginTokenResponse' },
);

/** What a sign-in answers: shape A, shape B (`?format=token`), or the second-factor challenge. */
export const SignInResponse = { anyOf: [UserAndSessionSchema, LoginTokenResponse, MfaChallengeSchema] };

/** Sends a sign-in's result in the shape asked for; a challenge is the same in both. */
export function sendSignIn(reply: FastifyReply, result: SignInResult, format: 'token' | undefined): FastifyReply {
  if ('mfa_required' in result) return reply.serializer(JSON.stringify).send(result);
  const { user, session } = result;
  if (format === 'token') {
    return reply.serializer(JSON.stringify).send({
      session: session.id,
      user: { id: user.id, email: user.email },
      expires_at: session.expires_at,
      refresh_token: session.refresh_token,
      jwt: session.jwt,
    });
  }
  return reply.serializer(JSON.stringify).send({ user, session });
}

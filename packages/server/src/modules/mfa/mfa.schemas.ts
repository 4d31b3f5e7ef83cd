import { Type } from '@sinclair/typebox';
import { StrictObject } from '../../lib/schemas.js';

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

import { Type } from '@sinclair/typebox';
import { StrictObject } from '../../lib/schemas.js';

/** Longer than any valid password (128 characters of up to 4 bytes); a bound on the work a request can ask for. */
const PASSWORD_INPUT_LENGTH_MAX = 1024;
const Password = Type.String({ maxLength: PASSWORD_INPUT_LENGTH_MAX, description: '8 to 128 characters; not a common breached password.' });
const Email = Type.String({ minLength: 1, maxLength: 320 });
const EmailToken = Type.String({ minLength: 1, maxLength: 200, description: 'The token from the email.' });

export const SignupBody = StrictObject({
  email: Email,
  password: Password,
  name: Type.Optional(Type.String({ maxLength: 1000, description: 'Display name, at most 200 characters after trimming.' })),
});

export const LoginBody = StrictObject({ email: Email, password: Type.String({ maxLength: PASSWORD_INPUT_LENGTH_MAX }) });

export const VerifyEmailBody = StrictObject({ token: EmailToken });
export const VerifyEmailQuery = StrictObject({ token: EmailToken });
export const ResendVerificationBody = StrictObject({ user_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ForgotPasswordBody = StrictObject({ email: Email });
export const ResetPasswordBody = StrictObject({ token: EmailToken, password: Password });
export const ChangePasswordBody = StrictObject({
  current_password: Type.String({ maxLength: PASSWORD_INPUT_LENGTH_MAX }),
  new_password: Password,
});

/** Exactly one of the three: checked by the service, which names the field in its refusal. */
export const ReauthenticateBody = StrictObject({
  password: Type.Optional(Type.String({ maxLength: PASSWORD_INPUT_LENGTH_MAX, description: "The user's password." })),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'A current 6-digit code of the authenticator.' })),
  recovery_code: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'One of the unused recovery codes; it is used up.' }),
  ),
});

export const ReauthenticationSchema = Type.Object(
  {
    object: Type.Literal('reauthentication'),
    reauthenticated_at: Type.String({
      format: 'date-time',
      description: 'From now until `REAUTH_WINDOW_SECONDS` later, this session may make the changes that need a recent sign-in.',
    }),
  },
  { $id: 'Reauthentication' },
);

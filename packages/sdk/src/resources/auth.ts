import type { Api } from '../api.js';
import { MfaRequiredError } from '../errors.js';
import type { RequestOptions } from '../transport.js';
import type {
  Accepted,
  ChangePasswordParams,
  ForgotPasswordParams,
  LoginParams,
  LoginTokenResponse,
  LogoutParams,
  MfaChallenge,
  SendEmailCodeParams,
  VerifyEmailCodeParams,
  VerifyMfaParams,
  OAuthCallbackParams,
  OAuthCallbackResult,
  OAuthStartParams,
  OAuthStartResult,
  ReauthenticateParams,
  Reauthentication,
  ResetPasswordParams,
  SendVerificationEmailParams,
  SignUpParams,
  User,
  UserAndSession,
  VerifyEmailParams,
} from '../types.js';

/** `format: 'token'` asks log in for shape B: `{ session: "<token>", user: { id, email }, expires_at, refresh_token }`. */
export interface LoginOptions extends RequestOptions {
  readonly format?: 'token';
}

/**
 * True when a sign-in answered the second-factor challenge (`mfa_required`) instead of a session:
 * ask the user for a code, then call `auth.verifyMfa({ mfa_token, code })`.
 */
export function isMfaChallenge(result: object): result is MfaChallenge {
  return (result as { mfa_required?: unknown }).mfa_required === true;
}

function sessionOrThrow<T extends object>(result: T | MfaChallenge): T {
  if (isMfaChallenge(result)) throw new MfaRequiredError(result);
  return result;
}

/** OAuth 2.0 / OIDC sign-in: `google`, `github`, `apple` or a configured OIDC provider key. */
export class OAuth {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** `POST /v1/auth/oauth/{provider}` → `{ url, state }`: send the user's browser to `url`. */
  start(provider: string, params: OAuthStartParams, options?: RequestOptions): Promise<OAuthStartResult> {
    return this.#api.call('POST /v1/auth/oauth/{provider}', { path: { provider }, body: params }, options);
  }

  /** `POST /v1/auth/oauth/{provider}/callback` with the `code` and `state` the provider redirected back with. */
  callback(provider: string, params: OAuthCallbackParams, options?: RequestOptions): Promise<OAuthCallbackResult> {
    return this.#api.call('POST /v1/auth/oauth/{provider}/callback', { path: { provider }, body: params }, options);
  }
}

/** `/v1/auth/*` with the secret key: sign-up, log in, email verification, password reset, OAuth. */
export class Auth {
  readonly #api: Api;
  readonly oauth: OAuth;
  constructor(api: Api) {
    this.#api = api;
    this.oauth = new OAuth(api);
  }

  /** `POST /v1/auth/signup` → 201 `{ user, session }`; sends the verification email. */
  signUp(params: SignUpParams, options?: RequestOptions): Promise<UserAndSession> {
    return this.#api.call('POST /v1/auth/signup', { body: params }, options);
  }

  /**
   * `POST /v1/auth/login`. Shape A `{ user, session: { id, expires_at, refresh_token, refresh_expires_at } }`
   * by default; shape B `{ session: "<token>", user: { id, email }, expires_at, refresh_token }` with
   * `{ format: 'token' }`. Wrong email or password → 401 `invalid_credentials`. A user with an
   * active second factor gets no session: this throws `MfaRequiredError` with its `mfaToken`.
   * (`operations.logIn` answers the service's body as it is, challenge included.)
   */
  login(params: LoginParams, options: LoginOptions & { readonly format: 'token' }): Promise<LoginTokenResponse>;
  login(params: LoginParams, options?: LoginOptions): Promise<UserAndSession>;
  login(params: LoginParams, options: LoginOptions = {}): Promise<UserAndSession | LoginTokenResponse> {
    const { format, ...requestOptions } = options;
    return this.#api
      .call('POST /v1/auth/login', { body: params, ...(format === undefined ? {} : { query: { format } }) }, requestOptions)
      .then(sessionOrThrow);
  }

  /**
   * `POST /v1/auth/mfa/verify`: finishes a sign-in that answered `mfa_required`, with the
   * authenticator's `code` or a `recovery_code` → the session, in the shape asked for.
   */
  verifyMfa(params: VerifyMfaParams, options: LoginOptions & { readonly format: 'token' }): Promise<LoginTokenResponse>;
  verifyMfa(params: VerifyMfaParams, options?: LoginOptions): Promise<UserAndSession>;
  verifyMfa(params: VerifyMfaParams, options: LoginOptions = {}): Promise<UserAndSession | LoginTokenResponse> {
    const { format, ...requestOptions } = options;
    return this.#api
      .call('POST /v1/auth/mfa/verify', { body: params, ...(format === undefined ? {} : { query: { format } }) }, requestOptions)
      .then(sessionOrThrow);
  }

  /** `POST /v1/auth/email-code` → 202 `{ accepted: true }` whether or not the account exists; emails a 6-digit code. */
  sendEmailCode(params: SendEmailCodeParams, options?: RequestOptions): Promise<Accepted> {
    return this.#api.call('POST /v1/auth/email-code', { body: params }, options);
  }

  /** `POST /v1/auth/email-code/verify` → the session; a user with an authenticator → `MfaRequiredError`. */
  verifyEmailCode(params: VerifyEmailCodeParams, options?: RequestOptions): Promise<UserAndSession> {
    return this.#api.call('POST /v1/auth/email-code/verify', { body: params }, options).then(sessionOrThrow) as Promise<UserAndSession>;
  }

  /** Ends the session `session_id` (the token, or its `svc_ses_<ref>` name) → event `session.revoked`, reason `logout`. */
  async logout(params: LogoutParams, options?: RequestOptions): Promise<void> {
    await this.#api.call('POST /v1/auth/logout', { body: params }, options);
  }

  /** `POST /v1/auth/verify-email` with the token from the email → the user, `email_verified: true`. */
  verifyEmail(params: VerifyEmailParams, options?: RequestOptions): Promise<User> {
    return this.#api.call('POST /v1/auth/verify-email', { body: params }, options);
  }

  /** Sends the verification email again (rate limited) → 202 `{ accepted: true }`. */
  sendVerificationEmail(params: SendVerificationEmailParams, options?: RequestOptions): Promise<Accepted> {
    return this.#api.call('POST /v1/auth/verify-email/send', { body: params }, options);
  }

  /** Sends a reset email → 202 whether or not the account exists. */
  forgotPassword(params: ForgotPasswordParams, options?: RequestOptions): Promise<Accepted> {
    return this.#api.call('POST /v1/auth/password/forgot', { body: params }, options);
  }

  /** Sets the password with the reset email's token; every session of the user is revoked. */
  resetPassword(params: ResetPasswordParams, options?: RequestOptions): Promise<User> {
    return this.#api.call('POST /v1/auth/password/reset', { body: params }, options);
  }

  /**
   * `POST /v1/auth/password/change` on behalf of the holder of `sessionToken` (a session route);
   * the user's other sessions are revoked. It needs a recent sign-in (see `reauthenticate`).
   * Same as `client.withSession(token).auth.changePassword(…)`.
   */
  changePassword(sessionToken: string, params: ChangePasswordParams, options?: RequestOptions): Promise<User> {
    return this.#api.withSession(sessionToken).call('POST /v1/auth/password/change', { body: params }, options);
  }

  /**
   * `POST /v1/users/me/reauthenticate` on behalf of the holder of `sessionToken`: the password, an
   * authenticator code or a recovery code, before a change that needs a recent sign-in.
   * Same as `client.withSession(token).auth.reauthenticate(…)`.
   */
  reauthenticate(sessionToken: string, params: ReauthenticateParams, options?: RequestOptions): Promise<Reauthentication> {
    return this.#api.withSession(sessionToken).call('POST /v1/users/me/reauthenticate', { body: params }, options);
  }
}

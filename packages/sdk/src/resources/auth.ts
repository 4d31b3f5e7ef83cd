import type { Api } from '../api.js';
import type { RequestOptions } from '../transport.js';
import type {
  Accepted,
  ChangePasswordParams,
  ForgotPasswordParams,
  LoginParams,
  LoginTokenResponse,
  LogoutParams,
  OAuthCallbackParams,
  OAuthCallbackResult,
  OAuthStartParams,
  OAuthStartResult,
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
   * `{ format: 'token' }`. Wrong email or password → 401 `invalid_credentials`.
   */
  login(params: LoginParams, options: LoginOptions & { readonly format: 'token' }): Promise<LoginTokenResponse>;
  login(params: LoginParams, options?: LoginOptions): Promise<UserAndSession>;
  login(params: LoginParams, options: LoginOptions = {}): Promise<UserAndSession | LoginTokenResponse> {
    const { format, ...requestOptions } = options;
    return this.#api.call('POST /v1/auth/login', { body: params, ...(format === undefined ? {} : { query: { format } }) }, requestOptions);
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
   * the user's other sessions are revoked. Same as `client.withSession(token).auth.changePassword(…)`.
   */
  changePassword(sessionToken: string, params: ChangePasswordParams, options?: RequestOptions): Promise<User> {
    return this.#api.withSession(sessionToken).call('POST /v1/auth/password/change', { body: params }, options);
  }
}

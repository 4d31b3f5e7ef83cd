/**
 * Every request and response type of the API. The shapes come from `generated/openapi.ts`, which a
 * test regenerates from the server's OpenAPI document; the names below are the SDK's vocabulary
 * for them. Field names are the API's own (snake_case), so the HTTP reference reads the same.
 */
import type { Operations } from './generated/openapi.js';

export type {
  ApiKey,
  AuditLogEntry,
  Balance,
  ErrorResponse,
  Event,
  Grant,
  Hold,
  Identity,
  Invitation,
  IssuedSession,
  LoginTokenResponse,
  MfaChallenge,
  OAuthProvider,
  Organization,
  OrganizationMembership,
  RecurringGrant,
  Role,
  Session,
  SigningKey,
  SsoConnection,
  Transaction,
  Transfer,
  User,
  UserAndSession,
  UserOrganizationMembership,
  Wallet,
  WalletTransaction,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
} from './generated/openapi.js';

/** Every operation the SDK can call, keyed `"METHOD /path"`. */
export type { Operations } from './generated/openapi.js';
export type OperationKey = keyof Operations;
export type PathParams<K extends OperationKey> = Operations[K]['path'];
export type QueryParams<K extends OperationKey> = Operations[K]['query'];
export type RequestBody<K extends OperationKey> = Operations[K]['body'];
export type ResponseBody<K extends OperationKey> = Operations[K]['response'];

// Wallets
export type CreateWalletParams = RequestBody<'POST /v1/wallets'>;
export type UpdateWalletParams = RequestBody<'PATCH /v1/wallets/{id}'>;
export type ListWalletsParams = QueryParams<'GET /v1/wallets'>;
export type AddCreditsParams = RequestBody<'POST /v1/wallets/{id}/credits'>;
export type DeductCreditsParams = RequestBody<'POST /v1/wallets/{id}/debits'>;
export type TransferParams = RequestBody<'POST /v1/wallets/transfer'>;
export type ListWalletTransactionsParams = QueryParams<'GET /v1/wallets/{id}/transactions'>;
export type CreateHoldParams = RequestBody<'POST /v1/wallets/{id}/holds'>;
export type CaptureHoldParams = RequestBody<'POST /v1/holds/{id}/capture'>;
export type ReverseTransactionParams = RequestBody<'POST /v1/transactions/{id}/reverse'>;
export type ListHoldsParams = QueryParams<'GET /v1/wallets/{id}/holds'>;
export type ListGrantsParams = QueryParams<'GET /v1/wallets/{id}/grants'>;
export type CreateRecurringGrantParams = RequestBody<'POST /v1/wallets/{id}/recurring-grants'>;
export type ListRecurringGrantsParams = QueryParams<'GET /v1/wallets/{id}/recurring-grants'>;
export type SessionBalanceParams = QueryParams<'GET /v1/wallet/balance'>;
export type SessionBalance = ResponseBody<'GET /v1/wallet/balance'>;

// Authentication and sessions
export type SignUpParams = RequestBody<'POST /v1/auth/signup'>;
export type LoginParams = RequestBody<'POST /v1/auth/login'>;
export type LogoutParams = RequestBody<'POST /v1/auth/logout'>;
export type OAuthStartParams = RequestBody<'POST /v1/auth/oauth/{provider}'>;
export type OAuthStartResult = ResponseBody<'POST /v1/auth/oauth/{provider}'>;
export type OAuthCallbackParams = RequestBody<'POST /v1/auth/oauth/{provider}/callback'>;
export type OAuthCallbackResult = ResponseBody<'POST /v1/auth/oauth/{provider}/callback'>;
export type VerifyEmailParams = RequestBody<'POST /v1/auth/verify-email'>;
export type SendVerificationEmailParams = RequestBody<'POST /v1/auth/verify-email/send'>;
export type ForgotPasswordParams = RequestBody<'POST /v1/auth/password/forgot'>;
export type ResetPasswordParams = RequestBody<'POST /v1/auth/password/reset'>;
export type ChangePasswordParams = RequestBody<'POST /v1/auth/password/change'>;
/** Exactly one of `{ password }`, `{ code }` (authenticator) or `{ recovery_code }`. */
export type ReauthenticateParams = RequestBody<'POST /v1/users/me/reauthenticate'>;
/** `{ object: 'reauthentication', reauthenticated_at }`. */
export type Reauthentication = ResponseBody<'POST /v1/users/me/reauthenticate'>;
/** The answer of calls that queue an email: `{ accepted: true }`. */
export type Accepted = ResponseBody<'POST /v1/auth/password/forgot'>;
// Second factors and emailed codes
export type VerifyMfaParams = RequestBody<'POST /v1/auth/mfa/verify'>;
export type SendEmailCodeParams = RequestBody<'POST /v1/auth/email-code'>;
export type VerifyEmailCodeParams = RequestBody<'POST /v1/auth/email-code/verify'>;
export type TotpEnrolment = ResponseBody<'POST /v1/users/me/mfa/totp'>;
export type TotpActivation = ResponseBody<'POST /v1/users/me/mfa/totp/verify'>;
export type ConfirmTotpParams = RequestBody<'POST /v1/users/me/mfa/totp/verify'>;
export type DisableTotpParams = RequestBody<'DELETE /v1/users/me/mfa/totp'>;
/** A user's second factors: `{ object: 'mfa', user_id, totp: { status, activated_at }, recovery_codes_left, methods }`. */
export type MfaStatus = ResponseBody<'GET /v1/users/{id}/mfa'>;
export type ValidateSessionParams = RequestBody<'POST /v1/sessions/validate'>;
export type ValidateSessionResult = ResponseBody<'POST /v1/sessions/validate'>;
export type RefreshSessionParams = RequestBody<'POST /v1/sessions/refresh'>;

// Users and roles
export type ListUsersParams = QueryParams<'GET /v1/users'>;
export type UpdateUserParams = RequestBody<'PATCH /v1/users/{id}'>;
export type DeletedUser = ResponseBody<'DELETE /v1/users/{id}'>;
export type ListUserSessionsParams = QueryParams<'GET /v1/users/{id}/sessions'>;
export type RevokedSessions = ResponseBody<'POST /v1/users/{id}/sessions/revoke'>;
export type CreateRoleParams = RequestBody<'POST /v1/roles'>;
export type UpdateRoleParams = RequestBody<'PATCH /v1/roles/{key}'>;
export type DeletedRole = ResponseBody<'DELETE /v1/roles/{key}'>;

// Webhooks, events, project
export type CreateWebhookParams = RequestBody<'POST /v1/webhooks'>;
export type UpdateWebhookParams = RequestBody<'PATCH /v1/webhooks/{id}'>;
export type RecoverWebhookParams = RequestBody<'POST /v1/webhooks/{id}/recover'>;
export type WebhookRecovery = ResponseBody<'POST /v1/webhooks/{id}/recover'>;
export type ListWebhooksParams = QueryParams<'GET /v1/webhooks'>;
/** An endpoint with its `secret`: only the answers of create and rotate-secret carry it. */
export type WebhookEndpointWithSecret = ResponseBody<'POST /v1/webhooks'>;
export type DeletedWebhookEndpoint = ResponseBody<'DELETE /v1/webhooks/{id}'>;
export type ListDeliveriesParams = QueryParams<'GET /v1/webhooks/{id}/deliveries'>;
export type ListEventsParams = QueryParams<'GET /v1/events'>;
export type Project = ResponseBody<'GET /v1/project'>;
export type UpdateProjectParams = RequestBody<'PATCH /v1/project'>;
export type Passkey = ResponseBody<'POST /v1/users/me/passkeys'>;

// The dashboard's cookie session (SvcDashboardClient); its routes are not part of the OpenAPI document.
/** `/dashboard/api/session`: the session behind the cookie, with the CSRF token its changes carry. */
export interface DashboardSession {
  readonly csrf_token: string;
  readonly expires_at: string;
  readonly project_id: string;
  /** The secret key signed in with: revoking it ends the session. */
  readonly key_id: string;
}

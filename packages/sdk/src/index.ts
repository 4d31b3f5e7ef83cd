export {
  SvcClient,
  type SvcClientOptions,
  SvcDashboardClient,
  type SvcDashboardClientOptions,
  SvcSessionClient,
  type SvcSessionClientOptions,
} from './client.js';
export {
  type ErrorBody,
  MfaRequiredError,
  SessionJwtError,
  type SessionJwtErrorCode,
  SignatureVerificationError,
  type SignatureVerificationReason,
  SvcConnectionError,
  ServiceError,
  SvcTimeoutError,
} from './errors.js';
export type { OperationId, OperationKeyOf, OperationMethods, SecretKeyOperationId, SessionOperationId } from './operations.js';
export { type ListPage, PagedList } from './pagination.js';
export { isMfaChallenge, type LoginOptions } from './resources/auth.js';
export type { EndUser, RequestOptions, ResponseInfo, TransportOptions } from './transport.js';
export type * from './types.js';
export type * from './webhook-events.js';
export { type VerifyWebhookOptions, type WebhookHeaders, verifyWebhook } from './webhook-signature.js';

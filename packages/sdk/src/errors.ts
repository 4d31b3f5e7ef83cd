/**
 * What the SDK throws. `ServiceError` is an error answer from the service (it has an HTTP status and a
 * stable `code` from docs/errors.md); `SvcConnectionError` means no answer arrived at all, and
 * `SvcTimeoutError` that none arrived in time. A call the caller aborted rejects with the
 * signal's own reason (an `AbortError` DOMException unless the caller gave another), as `fetch` does.
 */

/** The error body of every refusal (docs/api.md section 2). */
export interface ErrorBody {
  readonly type: string;
  readonly code: string;
  readonly message: string;
  readonly param?: string;
  readonly request_id?: string;
}

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  /** The HTTP status: 400, 401, 403, 404, 409, 413, 415, 422, 429, 500 or 503. */
  readonly status: number;
  /** `invalid_request_error`, `authentication_error`, `permission_error`, `rate_limit_error` or `api_error`. */
  readonly type: string;
  /** Stable snake_case code, e.g. `insufficient_credits`; the catalog is docs/errors.md. */
  readonly code: string;
  /** The request field the error is about, when there is one (e.g. `amount`, `events[1]`). */
  readonly param: string | undefined;
  /** `req_…`, from the body or else the `Request-Id` header: quote it when asking for support. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`), on 429 and some 503 answers. */
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Headers;

  constructor(init: { status: number; body: ErrorBody; headers: Headers; retryAfterSeconds?: number | undefined }) {
    super(init.body.message);
    this.status = init.status;
    this.type = init.body.type;
    this.code = init.body.code;
    this.param = init.body.param;
    this.requestId = init.body.request_id ?? init.headers.get('request-id') ?? undefined;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.headers = init.headers;
  }
}

/** No answer: the connection failed or was cut before a response arrived, after every retry. */
export class SvcConnectionError extends Error {
  override readonly name: string = 'SvcConnectionError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
  }
}

/** No answer within `timeoutMs`, after every retry. */
export class SvcTimeoutError extends SvcConnectionError {
  override readonly name: string = 'SvcTimeoutError';
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`No answer within ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
  }
}

/** Why `verifyWebhook` refused a delivery. */
export type SignatureVerificationReason =
  'header_missing' | 'header_invalid' | 'signature_mismatch' | 'timestamp_outside_tolerance' | 'body_invalid';

/** A webhook delivery that is not proven to come from the service: answer it with 401. */
export class SignatureVerificationError extends Error {
  override readonly name = 'SignatureVerificationError';
  readonly reason: SignatureVerificationReason;
  constructor(reason: SignatureVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Thrown by `auth.login` and `auth.verifyEmailCode` when the user has an active second factor: the
 * service answered `{ mfa_required: true, mfa_token, methods }` and no session. Ask the user for a
 * code, then call `auth.verifyMfa({ mfa_token: error.mfaToken, code })` within 5 minutes.
 */
export class MfaRequiredError extends Error {
  override readonly name = 'MfaRequiredError';
  /** `svc_mfa_…`: single use, 5 minutes, 5 codes. */
  readonly mfaToken: string;
  /** What the user can finish with: `totp` (`code`) and `recovery_code`. */
  readonly methods: ReadonlyArray<'totp' | 'recovery_code'>;

  constructor(challenge: { mfa_token: string; methods: ReadonlyArray<'totp' | 'recovery_code'> }) {
    super('The user has a second factor: finish the sign-in with auth.verifyMfa({ mfa_token, code }).');
    this.mfaToken = challenge.mfa_token;
    this.methods = challenge.methods;
  }
}

/**
 * Why a session JWT was refused (docs: README "Session JWTs"). One name per broken rule:
 * `malformed` (not a compact JWT, an `alg` other than ES256, RS256 or EdDSA, `none` included, or
 * claims of the wrong type), `invalid_signature`, `expired`, `not_yet_valid` (`nbf` ahead),
 * `wrong_issuer`, `wrong_audience`, `unknown_key` (its `kid` is not in the project's JWKS, even
 * after fetching it again) and `jwks_unavailable` (the JWKS could not be fetched, so nothing was
 * checked: the token may well be good).
 */
export type SessionJwtErrorCode =
  'malformed' | 'invalid_signature' | 'expired' | 'not_yet_valid' | 'wrong_issuer' | 'wrong_audience' | 'unknown_key' | 'jwks_unavailable';

/** A session JWT that is not proven good: answer 401, or 503 for `jwks_unavailable`. */
export class SessionJwtError extends Error {
  override readonly name = 'SessionJwtError';
  readonly code: SessionJwtErrorCode;
  constructor(code: SessionJwtErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The error catalog: every refusal the service can answer with, defined once.
 *
 * A `code` is a stable, snake_case name that clients may branch on; its HTTP status and `type`
 * never change once published. `docs/errors.md` is generated from this table
 * (`npm run docs:errors`) and a test keeps the two equal.
 */

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'api_error';

interface CatalogEntry {
  readonly status: number;
  readonly description: string;
}

export const ERROR_CATALOG = {
  // Requests the server could not read.
  body_invalid_json: { status: 400, description: 'The request body is not valid JSON, or is empty while Content-Type says JSON.' },
  body_too_large: { status: 413, description: 'The request body is larger than 1 MiB.' },
  unsupported_media_type: { status: 415, description: 'A request with a body must send `Content-Type: application/json`.' },
  route_not_found: { status: 404, description: 'No route has this path.' },
  method_not_allowed: {
    status: 405,
    description: 'The path exists but does not take this method; the `Allow` header lists the methods it takes.',
  },
  url_invalid: { status: 400, description: 'The path is not valid percent-encoding.' },
  url_too_long: { status: 414, description: 'A path parameter is longer than 100 characters; no id is that long.' },
  headers_too_large: { status: 431, description: 'The request headers are larger than the server accepts (16 KiB in all).' },
  request_malformed: { status: 400, description: 'The request is not valid HTTP/1.1; the connection is closed.' },
  request_timeout: { status: 408, description: 'The request did not arrive whole in time; the connection is closed.' },

  // Parameters.
  parameter_missing: { status: 400, description: 'A required parameter is missing; `param` names it.' },
  parameter_invalid: { status: 400, description: 'A parameter has the wrong type, format or range; `param` names it.' },
  parameter_unknown: { status: 400, description: 'The request names a parameter this route does not take; `param` names it.' },
  resource_missing: { status: 404, description: 'No such object in this project (objects of other projects answer the same way).' },

  // Credentials.
  credential_missing: { status: 401, description: 'The route needs a credential and the request carried none.' },
  credential_conflict: {
    status: 400,
    description: '`Authorization` and `X-API-Key` carry different credentials; send one (the same key in both is fine).',
  },
  invalid_api_key: { status: 401, description: 'The secret key is malformed, unknown or revoked.' },
  secret_key_required: { status: 403, description: 'A session token was sent to a route that needs a secret key.' },
  session_token_required: { status: 403, description: 'A secret key was sent to a route that needs a session token.' },
  session_invalid: { status: 401, description: 'The session token is malformed or unknown.' },
  session_expired: { status: 401, description: 'The session has expired; refresh it or log in again.' },
  session_revoked: { status: 401, description: 'The session was revoked.' },
  permission_denied: { status: 403, description: 'The credential is valid but may not do this.' },
  rate_limited: { status: 429, description: 'Too many requests; wait for the number of seconds in `Retry-After`.' },
  dashboard_session_invalid: {
    status: 401,
    description: 'The dashboard session cookie is unknown, expired or signed out, or its secret key was revoked; sign in again.',
  },
  csrf_token_invalid: {
    status: 403,
    description: "A dashboard request that changes something lacks the session's `X-CSRF-Token`, or comes from another origin.",
  },
  metrics_token_invalid: {
    status: 401,
    description: '`GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` and the request carried another token.',
  },
  api_key_in_use: {
    status: 409,
    description: 'The secret key is the one making this request (or this dashboard session); use another key.',
  },

  // Idempotency.
  idempotency_key_reused: {
    status: 422,
    description: 'This idempotency key was used with a different request; `param` names the first field that differs.',
  },
  idempotency_key_in_use: { status: 409, description: 'A request with this idempotency key is still running; retry after it finishes.' },

  // Wallets and the ledger.
  insufficient_credits: { status: 422, description: 'The wallet holds fewer credits than the amount requested; nothing changed.' },
  currency_mismatch: { status: 422, description: 'A movement between wallets of different units (currencies or custom units).' },
  same_wallet: { status: 400, description: 'A transfer from a wallet to itself.' },
  wallet_frozen: { status: 409, description: 'The wallet is frozen and refuses credits, debits and transfers.' },
  wallet_closed: { status: 409, description: 'The wallet is closed for good.' },
  wallet_not_empty: { status: 409, description: 'A wallet can be closed only at a balance of 0.' },
  balance_limit_exceeded: { status: 422, description: 'The balance would exceed 9,007,199,254,740,991 credits.' },
  credit_limit_below_debt: {
    status: 422,
    description:
      "The wallet's credit limit cannot go below what it already uses of it: its debt and what pending holds reserved beyond its grants.",
  },
  hold_not_pending: {
    status: 409,
    description: 'The hold is captured, voided or expired (past its `expires_at`); only a pending hold can be captured or voided.',
  },
  reversal_exceeds_original: {
    status: 422,
    description: 'The reversal would give back more than what is left of the transaction after its earlier reversals; nothing changed.',
  },
  transaction_not_reversible: {
    status: 422,
    description: 'Expiries and reversals cannot be reversed; only credits, debits (captures included) and transfers can.',
  },

  // Users and authentication.
  email_taken: { status: 409, description: 'A user with this email already exists in the project.' },
  invalid_credentials: { status: 401, description: 'The email or the password is wrong.' },
  password_too_weak: { status: 422, description: 'The password is too short, too long, or on the list of common breached passwords.' },
  user_banned: { status: 403, description: 'The user is banned and cannot log in.' },
  token_invalid: { status: 400, description: 'The email token is unknown or was already used.' },
  token_expired: { status: 400, description: 'The email token has expired.' },
  mfa_code_invalid: {
    status: 401,
    description: 'The second-factor code (authenticator or recovery code) is wrong, was already used, or its time step was used already.',
  },
  mfa_token_invalid: {
    status: 401,
    description: 'The `mfa_token` is unknown, expired (5 minutes), already used, or ended by 5 wrong codes; log in again.',
  },
  reauthentication_required: {
    status: 403,
    description:
      'The change (a passkey, an authenticator, the password) needs a sign-in within `REAUTH_WINDOW_SECONDS`; confirm with `POST /v1/users/me/reauthenticate`, then send it again.',
  },
  mfa_already_enabled: { status: 409, description: 'The user already has an active authenticator; disable it first.' },
  mfa_not_enabled: { status: 409, description: 'The user has no active authenticator (or no enrolment to confirm).' },
  email_code_invalid: {
    status: 401,
    description: 'The emailed sign-in code is wrong, expired (10 minutes), already used, or ended by 5 wrong tries; ask for a new one.',
  },
  refresh_token_invalid: { status: 401, description: 'The refresh token is malformed, unknown or expired.' },
  refresh_token_reused: { status: 401, description: 'A used refresh token was presented again; every session of its chain was revoked.' },
  role_key_taken: { status: 409, description: 'A role with this key already exists in the project, or the key is a built-in role.' },

  // Organizations.
  organization_slug_taken: { status: 409, description: 'Another organization of the project has this slug.' },
  organization_member_exists: { status: 409, description: 'The user is already a member of the organization.' },
  organization_owner_required: {
    status: 409,
    description: 'The change would leave the organization without an owner; make another member owner first.',
  },
  invitation_not_pending: { status: 409, description: 'The invitation was already accepted, revoked, replaced, or has expired.' },
  invitation_email_mismatch: {
    status: 403,
    description: "The session user's verified email is not the address the invitation was sent to.",
  },
  domain_not_allowed: {
    status: 422,
    description: 'The domain is a public mail domain (gmail.com, outlook.com and the like); no organization can claim it.',
  },
  domain_taken: {
    status: 409,
    description: 'Another organization of the project has verified this domain, or this organization has it already.',
  },
  domain_unverified: {
    status: 422,
    description:
      "The domain's TXT record was not found or holds another value, or an SSO connection names a domain the organization has not verified.",
  },

  // OAuth and SSO.
  oauth_provider_unknown: { status: 404, description: 'No such OAuth provider.' },
  oauth_provider_not_configured: { status: 400, description: 'The provider exists but this project has not configured it.' },
  oauth_state_invalid: { status: 400, description: 'The OAuth state is unknown, expired or already used.' },
  oauth_exchange_failed: { status: 400, description: 'The provider refused the authorization code, or answered with something unusable.' },
  redirect_uri_not_allowed: { status: 400, description: "The redirect URI is not on the project's allow list." },
  identity_already_linked: { status: 409, description: 'The user already has another account of this provider linked.' },
  identity_last_sign_in_method: {
    status: 409,
    description: "The identity is the user's only way to sign in (no password, no other provider); it cannot be unlinked.",
  },
  sso_connection_not_found: { status: 404, description: 'No SSO connection answers for this email domain or organization.' },
  sso_connection_exists: { status: 409, description: 'The organization has an SSO connection already; delete it first.' },
  sso_domain_taken: { status: 409, description: 'The email domain belongs to another SSO connection of the project.' },
  sso_request_invalid: {
    status: 400,
    description: 'The SSO sign-in this answer refers to (OIDC state, SAML InResponseTo) is unknown, expired or already used.',
  },
  sso_idp_initiated_not_allowed: {
    status: 403,
    description: 'A SAML response that answers no request of the service, on a connection that does not allow IdP-initiated sign-in.',
  },
  sso_signature_invalid: {
    status: 400,
    description: "The SAML response is unsigned, signed by another key than the connection's certificate, or wraps its signature.",
  },
  sso_assertion_expired: { status: 400, description: 'The SAML assertion is outside its NotBefore / NotOnOrAfter window (60 s skew).' },
  sso_assertion_replayed: { status: 400, description: 'This SAML assertion was used already.' },
  sso_audience_mismatch: { status: 400, description: 'The SAML assertion is meant for another service provider (audience).' },
  sso_destination_mismatch: {
    status: 400,
    description: "The SAML response's Destination or the assertion's Recipient is not this connection's ACS URL.",
  },
  sso_response_invalid: {
    status: 400,
    description: 'The SAML response is malformed, reports a failure, comes from another issuer, or lacks what a sign-in needs.',
  },
  sso_domain_mismatch: {
    status: 403,
    description: "The signed-in email is in none of the organization's verified domains, and its user is not a member of the organization.",
  },
  sso_code_invalid: { status: 400, description: 'The SSO code is unknown, expired or already used.' },

  // Passkeys.
  webauthn_not_configured: {
    status: 400,
    description: 'The project has no passkey relying party; set `webauthn` with `PATCH /v1/project` first.',
  },
  passkey_challenge_invalid: {
    status: 400,
    description: 'The passkey challenge is unknown, already used, or belongs to another ceremony, user or project.',
  },
  passkey_challenge_expired: { status: 400, description: 'The passkey challenge is older than 5 minutes; ask for new options.' },
  passkey_verification_failed: {
    status: 400,
    description: "The authenticator's registration response did not verify: origin, relying party, user verification or format.",
  },
  passkey_already_registered: { status: 409, description: 'This authenticator credential is registered already in the project.' },
  passkey_invalid: {
    status: 401,
    description:
      'The passkey sign-in did not verify: unknown or removed credential, wrong origin or relying party, bad signature, no user verification, or a counter that went back (a cloned authenticator).',
  },

  // Webhooks.
  webhook_url_invalid: { status: 400, description: 'The webhook URL does not parse or is not `https://`.' },
  webhook_url_forbidden: {
    status: 400,
    description: 'The webhook URL names or resolves to a loopback, private, link-local or metadata address.',
  },
  event_type_unknown: { status: 400, description: 'The event type is not in the catalog.' },

  // The service itself.
  internal_error: { status: 500, description: 'A bug in the service. It is logged with the request id; please report it.' },
  service_unavailable: {
    status: 503,
    description: 'The service cannot reach a component it needs (for example the database); retry later.',
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function errorTypeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export interface ApiErrorOptions {
  readonly param?: string | undefined;
  /** Extra response headers, e.g. `Retry-After` on 429. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/** The one error type the service throws for a refusal. Rendered by `http/errors.ts`. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.type = errorTypeForStatus(this.status);
    this.param = options.param;
    this.headers = options.headers ?? {};
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** Renders the catalog as the Markdown of docs/errors.md. */
export function renderErrorCatalogMarkdown(): string {
  const lines = [
    '# Errors',
    '',
    '<!-- Generated from packages/server/src/lib/errors.ts by `npm run docs:errors`; a test keeps them equal. -->',
    '',
    'Every error response has this body, and the `Request-Id` header repeats `request_id`:',
    '',
    '```json',
    '{ "error": { "type": "invalid_request_error", "code": "insufficient_credits",',
    '             "message": "Wallet wlt_123 has 40 credits; 100 requested.",',
    '             "param": "amount", "request_id": "req_..." } }',
    '```',
    '',
    '`type` follows from the status: `invalid_request_error` (400, 404, 405, 408, 409, 413, 414, 415, 422, 431),',
    '`authentication_error` (401), `permission_error` (403), `rate_limit_error` (429), `api_error` (500, 503).',
    '`param` is present when one parameter is to blame. A 5xx is always a bug or an outage, never',
    'something the client did.',
    '',
    '| code | status | type | meaning |',
    '|---|---|---|---|',
  ];
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    lines.push(`| \`${code}\` | ${entry.status} | \`${errorTypeForStatus(entry.status)}\` | ${entry.description} |`);
  }
  return `${lines.join('\n')}\n`;
}

export interface ErrorBody {
  error: {
    type: string;
    code: ErrorCode;
    message: string;
    param?: string;
    request_id: string;
  };
}

/** The one renderer of errors: every refusal leaves the service through here. */
export function renderError(error: ApiError, requestId: string): ErrorBody {
  return {
    error: {
      type: error.type,
      code: error.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param }),
      request_id: requestId,
    },
  };
}

/*
 * Generated from the service's OpenAPI document (GET /v1/openapi.json) by
 * packages/sdk/scripts/openapi-types.ts. Do not edit by hand: run `npm run generate -w @svc/sdk`.
 * packages/sdk/test/openapi-types.test.ts fails whenever this file and the server's routes differ.
 */

/** Every refusal; see docs/errors.md for the codes. */
export interface ErrorResponse {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    request_id: string;
  };
}

/** The project's passkey relying party (docs/api.md, "Passkeys"). */
export interface WebAuthnRelyingParty {
  /** The domain passkeys are bound to: a lower-case host name such as `example.com` (`localhost` in development). */
  rp_id: string;
  /** Shown by authenticators; 1 to 100 characters. */
  rp_name: string;
  /** The exact web origins ceremonies run on: `https://` on `rp_id` or a subdomain of it, or `http://localhost[:port]`. No path or trailing slash. */
  origins: string[];
}

export interface ApiKey {
  /** Begins with `key_`. */
  id: string;
  object: 'api_key';
  project_id: string;
  name: string | null;
  /** The first characters of the key, e.g. `svc_sk_Ab3d`. */
  prefix: string;
  /** The last four characters of the key. */
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export interface Wallet {
  /** Begins with `wlt_`. */
  id: string;
  object: 'wallet';
  user_id: string;
  currency: string;
  balance: number;
  /** The balance less pending holds and expired grants not yet removed; debits, transfers and new holds may take it down to −`credit_limit`. */
  available: number;
  /** How far `balance` and `available` may go below 0 (default 0): debits, captures, outgoing transfers and holds may take them down to −`credit_limit`. */
  credit_limit: number;
  /** What the wallet owes: credits taken beyond its grants, repaid first by the next credits. `balance` = Σ grants `remaining` − `debt`. */
  debt: number;
  status: 'active' | 'frozen' | 'closed';
  metadata: Record<string, string>;
  low_balance_threshold: number | null;
  created_at: string;
  updated_at: string;
}

export interface WalletTransaction {
  /** Begins with `txn_`. */
  id: string;
  object: 'transaction';
  type: 'credit' | 'debit' | 'expiry' | 'reversal' | 'transfer_out' | 'transfer_in';
  wallet_id: string;
  /** Credits, a whole number from 1 to 10^12. */
  amount: number;
  /** The wallet's balance after the movement (below 0 only within its credit limit). */
  balance_after: number;
  description: string | null;
  metadata: Record<string, string>;
  idempotency_key: string | null;
  status: 'completed';
  created_at: string;
  /** Who made the request: a secret key, a session, the dashboard, the service or an operator (system), or a public link. */
  actor:
    | {
        type: 'secret_key';
        /** The key, `key_…`. */
        id: string;
      }
    | {
        type: 'session';
        /** The session, `svc_ses_<ref>`: its name, never the token. */
        id: string;
        user_id: string;
      }
    | {
        type: 'dashboard';
        key_id: string;
      }
    | {
        type: 'system';
      }
    | {
        type: 'anonymous';
      };
  request_id: string | null;
  /** Debits, transfers and expiries: the grants drawn on, in order (what they fall short of `amount` was taken on the credit limit, as debt); credits: the grant made (none when the credit only repaid debt); [] before grants existed. */
  sources: Array<{
    /** Begins with `grt_`. */
    grant_id: string;
    /** Credits, a whole number from 1 to 10^12. */
    amount: number;
    /** The grant's category. */
    category: string;
  }>;
  recurring_grant_id: string | null;
  /** What a credit or a received transfer repaid of the wallet's debt before making grants (docs/adr/0023-credit-limits.md); 0 for every other movement. */
  repaid: number;
  /** Credits only: the category of the grant made. */
  category?: string;
  /** Debits made with `categories`: the categories drawn on. */
  categories?: string[];
  /** Reversals only: the transaction reversed, `txn_…`. */
  reverses?: string;
  /** Credits, debits and transfers read one by one (`GET /transactions/{id}`): what their reversals gave back so far (docs/adr/0024-reversals.md). */
  reversed_amount?: number;
  /** The other wallet of a transfer, or of a transfer's reversal; those only. */
  counterparty_wallet_id?: string;
}

export interface Transaction {
  /** Begins with `txn_`. */
  id: string;
  object: 'transaction';
  type: 'credit' | 'debit' | 'expiry' | 'reversal';
  wallet_id: string;
  /** Credits, a whole number from 1 to 10^12. */
  amount: number;
  /** The wallet's balance after the movement (below 0 only within its credit limit). */
  balance_after: number;
  description: string | null;
  metadata: Record<string, string>;
  idempotency_key: string | null;
  status: 'completed';
  created_at: string;
  /** Who made the request: a secret key, a session, the dashboard, the service or an operator (system), or a public link. */
  actor:
    | {
        type: 'secret_key';
        /** The key, `key_…`. */
        id: string;
      }
    | {
        type: 'session';
        /** The session, `svc_ses_<ref>`: its name, never the token. */
        id: string;
        user_id: string;
      }
    | {
        type: 'dashboard';
        key_id: string;
      }
    | {
        type: 'system';
      }
    | {
        type: 'anonymous';
      };
  request_id: string | null;
  /** Debits, transfers and expiries: the grants drawn on, in order (what they fall short of `amount` was taken on the credit limit, as debt); credits: the grant made (none when the credit only repaid debt); [] before grants existed. */
  sources: Array<{
    /** Begins with `grt_`. */
    grant_id: string;
    /** Credits, a whole number from 1 to 10^12. */
    amount: number;
    /** The grant's category. */
    category: string;
  }>;
  recurring_grant_id: string | null;
  /** What a credit or a received transfer repaid of the wallet's debt before making grants (docs/adr/0023-credit-limits.md); 0 for every other movement. */
  repaid: number;
  /** Credits only: the category of the grant made. */
  category?: string;
  /** Debits made with `categories`: the categories drawn on. */
  categories?: string[];
  /** Reversals only: the transaction reversed, `txn_…`. */
  reverses?: string;
  /** Credits, debits and transfers read one by one (`GET /transactions/{id}`): what their reversals gave back so far (docs/adr/0024-reversals.md). */
  reversed_amount?: number;
}

export interface Transfer {
  /** Begins with `txn_`. */
  id: string;
  object: 'transfer';
  status: 'completed';
  from_wallet_id: string;
  to_wallet_id: string;
  /** Credits, a whole number from 1 to 10^12. */
  amount: number;
  description: string | null;
  idempotency_key: string | null;
  created_at: string;
  /** Who made the request: a secret key, a session, the dashboard, the service or an operator (system), or a public link. */
  actor:
    | {
        type: 'secret_key';
        /** The key, `key_…`. */
        id: string;
      }
    | {
        type: 'session';
        /** The session, `svc_ses_<ref>`: its name, never the token. */
        id: string;
        user_id: string;
      }
    | {
        type: 'dashboard';
        key_id: string;
      }
    | {
        type: 'system';
      }
    | {
        type: 'anonymous';
      };
  request_id: string | null;
  /** Debits, transfers and expiries: the grants drawn on, in order (what they fall short of `amount` was taken on the credit limit, as debt); credits: the grant made (none when the credit only repaid debt); [] before grants existed. */
  sources: Array<{
    /** Begins with `grt_`. */
    grant_id: string;
    /** Credits, a whole number from 1 to 10^12. */
    amount: number;
    /** The grant's category. */
    category: string;
  }>;
  /** What a credit or a received transfer repaid of the wallet's debt before making grants (docs/adr/0023-credit-limits.md); 0 for every other movement. */
  repaid: number;
  /** Transfers made with `categories`: the categories drawn on. */
  categories?: string[];
  /** Credits, debits and transfers read one by one (`GET /transactions/{id}`): what their reversals gave back so far (docs/adr/0024-reversals.md). */
  reversed_amount?: number;
}

export interface Hold {
  /** Begins with `hld_`. */
  id: string;
  object: 'hold';
  wallet_id: string;
  /** Credits, a whole number from 1 to 10^12. */
  amount: number;
  captured_amount: number;
  status: 'pending' | 'captured' | 'voided' | 'expired';
  description: string | null;
  metadata: Record<string, string>;
  /** The debit its capture made; null until captured. */
  transaction_id: string | null;
  expires_at: string;
  created_at: string;
  /** Holds made with `categories`: the categories reserved from. */
  categories?: string[];
}

export interface Grant {
  /** Begins with `grt_`. */
  id: string;
  object: 'grant';
  wallet_id: string;
  amount: number;
  remaining: number;
  /** Lower is spent first. */
  priority: number;
  /** Null: never expires. */
  expires_at: string | null;
  status: 'active' | 'depleted' | 'expired';
  created_at: string;
  /** The category of the credit that made it (a transferred grant keeps its own). */
  category: string;
}

export interface RecurringGrant {
  /** Begins with `rgr_`. */
  id: string;
  object: 'recurring_grant';
  wallet_id: string;
  /** Credits per period, a whole number from 1 to 10^12. */
  amount: number;
  /** The unit of a period; months and years are calendar months anchored on the day of `starts_at`. */
  interval: 'day' | 'week' | 'month' | 'year';
  /** Intervals per period, 1 to 12 (default 1). */
  interval_count: number;
  starts_at: string;
  /** `period_end` (the default): each credit expires when its period ends; `never`: they don't. */
  expires: 'never' | 'period_end';
  category: string;
  /** The grants' priority, 0 to 100 (default 50): lower is spent first. */
  priority: number;
  description: string | null;
  metadata: Record<string, string>;
  status: 'active' | 'cancelled';
  /** The start of the next period to credit; null once cancelled. */
  next_grant_at: string | null;
  created_at: string;
  cancelled_at: string | null;
}

export interface User {
  /** Begins with `usr_`. */
  id: string;
  object: 'user';
  email: string;
  name: string;
  email_verified: boolean;
  /** Role keys. */
  roles: string[];
  metadata: Record<string, string>;
  banned: boolean;
  created_at: string;
  updated_at: string;
}

export interface IssuedSession {
  /** The session token, `svc_ses_<ref>.<secret>`: send it as `Authorization: Bearer`. */
  id: string;
  expires_at: string;
  /** `svc_rt_…`; single use: `POST /v1/sessions/refresh` returns a new one. */
  refresh_token: string;
  refresh_expires_at: string;
  /** A short-lived JWT of this session (`SESSION_JWT_TTL_SECONDS`), to verify offline against `GET /v1/projects/{project_id}/jwks.json`. */
  jwt: string;
}

export interface UserAndSession {
  user: User;
  session: IssuedSession;
}

export interface LoginTokenResponse {
  /** The session token. */
  session: string;
  user: {
    id: string;
    email: string;
  };
  expires_at: string;
  refresh_token: string;
  /** A short-lived JWT of the session, as `session.jwt` in shape A. */
  jwt: string;
}

/** The first factor was right; the user has a second factor, so no session yet. */
export interface MfaChallenge {
  mfa_required: true;
  /** `svc_mfa_…`: send it with a code to `POST /v1/auth/mfa/verify` within 5 minutes; 5 wrong codes end it. */
  mfa_token: string;
  /** What the user can finish with: `totp` (`code`) and `recovery_code`. */
  methods: Array<'totp' | 'recovery_code'>;
}

export interface SigningKey {
  object: 'signing_key';
  /** The `kid` of the JWTs it signs and of its entry in the JWKS. */
  kid: string;
  alg: 'ES256' | 'RS256' | 'EdDSA';
  /** `signing` signs new JWTs; `next` is published and signs after the next rotation; `retiring` signs no more and stays published until every JWT it signed has expired. */
  status: 'signing' | 'next' | 'retiring';
  created_at: string;
  /** When it started signing; null for the next key. */
  activated_at: string | null;
  /** When a rotation stopped it signing. */
  retired_at: string | null;
}

export interface Session {
  /** `svc_ses_<ref>`, the session token up to the dot. */
  id: string;
  object: 'session';
  user_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  refresh_expires_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
}

export interface Identity {
  object: 'identity';
  /** `google`, `github`, `apple`, or a generic OpenID Connect provider key. */
  provider: string;
  /** The provider's stable id of the account (`sub`, or GitHub's numeric id). */
  subject: string;
  /** The email the provider gave at the last sign-in. */
  email: string | null;
  created_at: string;
  last_used_at: string;
}

export interface Role {
  object: 'role';
  key: string;
  name: string;
  permissions: string[];
  /** `owner`, `admin` and `member` exist in every project and cannot be changed. */
  built_in: boolean;
  created_at: string | null;
  updated_at: string | null;
}

/** A configured provider. Its client secret (or Apple private key) is never returned. */
export interface OAuthProvider {
  object: 'oauth_provider';
  provider: string;
  kind: 'google' | 'apple' | 'github' | 'oidc';
  client_id: string;
  /** Generic OpenID Connect providers; null for the built-in ones. */
  issuer: string | null;
  scopes: string[];
  redirect_uris: string[];
  apple: {
    team_id: string;
    key_id: string;
  } | null;
  created_at: string;
  updated_at: string;
}

export interface OAuthSignIn {
  user: User;
  session: IssuedSession;
  /** True when this sign-in created the user. */
  created: boolean;
}

/** The user has a second factor: finish with `POST /v1/auth/mfa/verify`. */
export interface OAuthMfaChallenge {
  mfa_required: true;
  /** `svc_mfa_…`: send it with a code to `POST /v1/auth/mfa/verify` within 5 minutes; 5 wrong codes end it. */
  mfa_token: string;
  /** What the user can finish with: `totp` (`code`) and `recovery_code`. */
  methods: Array<'totp' | 'recovery_code'>;
  /** True when this sign-in created the user. */
  created: boolean;
}

export interface Organization {
  /** Begins with `org_`. */
  id: string;
  object: 'organization';
  name: string;
  slug: string;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export interface OrganizationMembership {
  object: 'organization_membership';
  organization_id: string;
  user_id: string;
  /** The key of one of the project's roles. */
  role: string;
  created_at: string;
  updated_at: string;
}

export interface Invitation {
  /** Begins with `inv_`. */
  id: string;
  object: 'invitation';
  organization_id: string;
  email: string;
  role: string;
  status: 'pending' | 'accepted' | 'revoked' | 'replaced' | 'expired';
  expires_at: string;
  accepted_at: string | null;
  accepted_user_id: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface UserOrganizationMembership {
  object: 'organization_membership';
  organization_id: string;
  user_id: string;
  /** The key of one of the project's roles. */
  role: string;
  created_at: string;
  updated_at: string;
  organization: Organization;
}

/** An email domain of an organization; once verified, SSO through the organization's connection answers for it. */
export interface OrganizationDomain {
  object: 'organization_domain';
  organization_id: string;
  /** Lower case, ASCII (internationalized names as punycode), no trailing dot. */
  domain: string;
  status: 'pending' | 'verified';
  /** `dns`: verified once `POST …/verify` finds the TXT record. `manual`: the operator's own assertion that the organization owns the domain; verified at once. */
  verification: 'dns' | 'manual';
  /** The TXT record to publish in the domain's DNS for `dns` verification. */
  txt_record: {
    /** `_svc-verification.<domain>`. */
    name: string;
    /** The text the record must hold; random for each organization and domain. */
    value: string;
  };
  created_at: string;
  verified_at: string | null;
}

/** An organization's SSO connection. The OIDC client secret is never returned. */
export interface SsoConnection {
  id: string;
  object: 'sso_connection';
  organization_id: string;
  type: 'oidc' | 'saml';
  domains: string[];
  redirect_uris: string[];
  default_role: string;
  allow_idp_initiated: boolean;
  oidc: {
    issuer: string;
    client_id: string;
    /** The service's callback to register at the identity provider. */
    redirect_uri: string;
  } | null;
  saml: {
    idp_entity_id: string;
    idp_sso_url: string;
    idp_certificate: string;
    /** This service's entity id for the connection (also its metadata URL). */
    sp_entity_id: string;
    /** The AssertionConsumerService URL (HTTP-POST binding). */
    acs_url: string;
    metadata_url: string;
  } | null;
  created_at: string;
}

export interface SsoSignIn {
  user: User;
  session: IssuedSession;
  organization_id: string;
}

/** The user has a second factor: finish with `POST /v1/auth/mfa/verify`. */
export interface SsoMfaChallenge {
  mfa_required: true;
  /** `svc_mfa_…`: send it with a code to `POST /v1/auth/mfa/verify` within 5 minutes; 5 wrong codes end it. */
  mfa_token: string;
  /** What the user can finish with: `totp` (`code`) and `recovery_code`. */
  methods: Array<'totp' | 'recovery_code'>;
  organization_id: string;
}

export interface Passkey {
  /** Begins with `pk_`. */
  id: string;
  object: 'passkey';
  user_id: string;
  name: string;
  /** `multi_device`: a synced passkey (a platform account keeps it); `single_device`: bound to one authenticator. */
  device_type: 'single_device' | 'multi_device';
  /** Whether the authenticator reports the passkey backed up (synced). */
  backed_up: boolean;
  /** How the authenticator is reached: `internal`, `hybrid`, `usb`, `nfc`, `ble`. */
  transports: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface Balance {
  credits: number;
  currency: string;
  /** The credits less pending holds and expired grants, down to −`credit_limit`. Always present, but for a balance asked `?at=` a past time. */
  available?: number;
  /** What the wallet owes (docs/adr/0023-credit-limits.md). Always present, but for a balance asked `?at=` a past time. */
  debt?: number;
  /** How far the balance may go below 0. Always present, but for a balance asked `?at=` a past time. */
  credit_limit?: number;
  /** Present when the balance was asked `?at=` a past time: that time, normalized. */
  at?: string;
  /** The credits by category: each category with credits left in unexpired grants, by name, with Σ `remaining` of those grants (pending holds' reservations included). Always present, but for a balance asked `?at=` a past time. */
  categories?: Array<{
    category: string;
    remaining: number;
  }>;
}

export interface WebhookEndpoint {
  /** Begins with `we_`. */
  id: string;
  object: 'webhook_endpoint';
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: 'failing' | 'manual' | null;
  rate_limit_per_second: number | null;
  created_at: string;
}

export interface WebhookAttempt {
  /** 1, 2, … within the delivery. */
  attempt: number;
  kind: 'scheduled' | 'manual';
  /** When the request was sent. */
  created_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
}

export interface WebhookDelivery {
  /** Begins with `del_`. */
  id: string;
  object: 'webhook_delivery';
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** `failed`: every scheduled attempt failed; no more automatic attempts (retry by hand). */
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  /** Oldest first; the most recent 50. */
  attempts: WebhookAttempt[];
}

export interface Event {
  /** Begins with `evt_`. */
  id: string;
  object: 'event';
  /** One of the event types of the catalog (docs/api.md section 5). */
  type: string;
  created_at: string;
  /** The payload; its fields depend on `type`. */
  data: Record<string, unknown>;
  /** Unique per event and the same on every delivery attempt: receivers de-duplicate by it. */
  idempotency_key: string;
}

export interface EventType {
  /** The event type, as in `Event.type` and in a webhook endpoint's `events`. */
  type: string;
  description: string;
  /** A JSON Schema of the event's `data`. */
  schema: Record<string, unknown>;
}

export interface AuditLogEntry {
  /** Begins with `aud_`. */
  id: string;
  object: 'audit_log';
  created_at: string;
  /** `<resource>.<verb>`, e.g. `wallet.credit`, `session.refresh_token_reused`. */
  action: string;
  /** Who made the request: a secret key, a session, the dashboard, the service or an operator (system), or a public link. */
  actor:
    | {
        type: 'secret_key';
        /** The key, `key_…`. */
        id: string;
      }
    | {
        type: 'session';
        /** The session, `svc_ses_<ref>`: its name, never the token. */
        id: string;
        user_id: string;
      }
    | {
        type: 'dashboard';
        key_id: string;
      }
    | {
        type: 'system';
      }
    | {
        type: 'anonymous';
      };
  resource: {
    type: string;
    id: string | null;
  };
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** `success`, or the error code the request was refused with. */
  outcome: string;
  /** What changed, e.g. the amount and the balances before and after. Never a secret. */
  changes: Record<string, string | number | boolean | null>;
  /** SHA-256 of `prev_hash` and this entry's content; null until sealed (within seconds). */
  hash: string | null;
  /** The previous link's hash in the project's chain; null until sealed. */
  prev_hash: string | null;
}

/** Every operation of the API, keyed by method and path template. */
export interface Operations {
  /** The process is up */
  'GET /healthz': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      status: string;
    };
  };
  /** The database answers */
  'GET /readyz': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      status: string;
    };
  };
  /** Prometheus metrics, in the Prometheus text format */
  'GET /metrics': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: string;
  };
  /** This API as OpenAPI 3.1 */
  'GET /v1/openapi.json': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Record<string, unknown>;
  };
  /** The project the secret key belongs to */
  'GET /v1/project': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      /** Begins with `prj_`. */
      id: string;
      object: 'project';
      name: string;
      /** Null until set; passkey routes need it. */
      webauthn: WebAuthnRelyingParty | null;
      created_at: string;
    };
  };
  /** Change the project's name or its passkey relying party (`webauthn`) */
  'PATCH /v1/project': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** 1 to 200 characters after trimming. */
      name?: string;
      /** The relying party of the project's passkeys; `null` removes it (passkeys then cannot be used). */
      webauthn?: {
        /** The domain passkeys are bound to: a lower-case host name such as `example.com` (`localhost` in development). */
        rp_id: string;
        /** Shown by authenticators; 1 to 100 characters. */
        rp_name: string;
        /** The exact web origins ceremonies run on: `https://` on `rp_id` or a subdomain of it, or `http://localhost[:port]`. No path or trailing slash. */
        origins: string[];
      } | null;
    };
    status: 200;
    response: {
      /** Begins with `prj_`. */
      id: string;
      object: 'project';
      name: string;
      /** Null until set; passkey routes need it. */
      webauthn: WebAuthnRelyingParty | null;
      created_at: string;
    };
  };
  /** The project's secret keys, newest first, by prefix and last four characters */
  'GET /v1/api-keys': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: ApiKey[];
      has_more: boolean;
    };
  };
  /** Create a secret key; the response carries the key, shown only here */
  'POST /v1/api-keys': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name?: string;
    };
    status: 201;
    response: {
      /** Begins with `key_`. */
      id: string;
      object: 'api_key';
      project_id: string;
      name: string | null;
      /** The first characters of the key, e.g. `svc_sk_Ab3d`. */
      prefix: string;
      /** The last four characters of the key. */
      last4: string;
      created_at: string;
      revoked_at: string | null;
      /** `svc_sk_…`: shown only here, at creation. */
      secret_key: string;
    };
  };
  /** Revoke a secret key at once; its dashboard sessions end with it. Not the key making the request */
  'POST /v1/api-keys/{id}/revoke': {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: ApiKey;
  };
  /** List wallets, newest first */
  'GET /v1/wallets': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
      /** Only the wallets of this user. */
      user_id?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Wallet[];
      has_more: boolean;
    };
  };
  /** Create a wallet */
  'POST /v1/wallets': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The owner, a user of the project. */
      user_id: string;
      /** The unit of the wallet's credits: an ISO 4217 code (`USD`) or a custom unit of 2 to 16 upper-case letters, digits and underscores starting with a letter (`CREDITS`, `GPU_HOURS`). Amounts are whole numbers of this unit; movements only between wallets of the same unit. */
      currency: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      low_balance_threshold?: number | null;
      /** How far `balance` and `available` may go below 0 (default 0): debits, captures, outgoing transfers and holds may take them down to −`credit_limit`. */
      credit_limit?: number;
    };
    status: 201;
    response: Wallet;
  };
  /** Retrieve a wallet */
  'GET /v1/wallets/{id}': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Wallet;
  };
  /** Update metadata, the low-balance threshold or the credit limit */
  'PATCH /v1/wallets/{id}': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Merged into the stored metadata; a key set to "" is removed. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      low_balance_threshold?: number | null;
      /** How far `balance` and `available` may go below 0 (default 0): debits, captures, outgoing transfers and holds may take them down to −`credit_limit`. */
      credit_limit?: number;
    };
    status: 200;
    response: Wallet;
  };
  /** Freeze a wallet: it refuses credits, debits and transfers */
  'POST /v1/wallets/{id}/freeze': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Wallet;
  };
  /** Unfreeze a frozen wallet */
  'POST /v1/wallets/{id}/unfreeze': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Wallet;
  };
  /** Close an empty wallet for good */
  'POST /v1/wallets/{id}/close': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Wallet;
  };
  /** A wallet's balance, now or at a past time */
  'GET /v1/wallets/{id}/balance': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: {
      /** A past time (ISO 8601): the balance after every movement made at or before it; 0 before the first. */
      at?: string;
    };
    body: undefined;
    status: 200;
    response: Balance;
  };
  /** Add credits */
  'POST /v1/wallets/{id}/credits': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Credits, a whole number from 1 to 10^12. */
      amount: number;
      description?: string;
      /** Same as the `Idempotency-Key` header; send one or the other, or the same in both. */
      idempotency_key?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      /** The grant's priority, 0 to 100 (default 50): lower is spent first. */
      priority?: number;
      /** When what is left of the grant expires; a future time. Default: never. */
      expires_at?: string;
      /** The grant's category (default `default`). A lower-case name of 1 to 40 letters, digits and `_`, starting with a letter, e.g. `paid` or `promotional`. */
      category?: string;
    };
    status: 201;
    response: Transaction;
  };
  /** Deduct credits */
  'POST /v1/wallets/{id}/debits': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Credits, a whole number from 1 to 10^12. */
      amount: number;
      description?: string;
      /** Same as the `Idempotency-Key` header; send one or the other, or the same in both. */
      idempotency_key?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      /** Draw only on grants of these categories (1 to 10, each once); refused with `insufficient_credits` when they do not make the amount available. Default: every category. */
      categories?: string[];
    };
    status: 201;
    response: Transaction;
  };
  /** A wallet's transactions, newest first */
  'GET /v1/wallets/{id}/transactions': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: WalletTransaction[];
      has_more: boolean;
    };
  };
  /** Move credits between two wallets */
  'POST /v1/wallets/transfer': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** Begins with `wlt_`. */
      from_wallet_id: string;
      /** Begins with `wlt_`. */
      to_wallet_id: string;
      /** Credits, a whole number from 1 to 10^12. */
      amount: number;
      description?: string;
      /** Same as the `Idempotency-Key` header; send one or the other, or the same in both. */
      idempotency_key?: string;
      /** Draw only on grants of these categories (1 to 10, each once); refused with `insufficient_credits` when they do not make the amount available. Default: every category. */
      categories?: string[];
    };
    status: 201;
    response: Transfer;
  };
  /** Apply up to 1,000 credits, debits, transfers, holds, captures, voids and reversals, each on its own or all or nothing */
  'POST /v1/wallets/batch': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      operations: Array<{
        type: 'credit' | 'debit' | 'transfer' | 'hold' | 'capture' | 'void' | 'reverse';
        /** Credits, debits and holds: the wallet. */
        wallet_id?: string;
        /** Transfers: the wallet the credits leave. */
        from_wallet_id?: string;
        /** Transfers: the wallet the credits go to. */
        to_wallet_id?: string;
        /** Captures and voids: the hold, `hld_…`. */
        hold_id?: string;
        /** Reversals: the transaction reversed, `txn_…`. */
        transaction_id?: string;
        /** Credits; every type but `void` (optional on `capture` and `reverse`: default all, or all that is left). */
        amount?: number;
        /** The grant's priority, 0 to 100 (default 50): lower is spent first. */
        priority?: number;
        /** When what is left of the grant expires; a future time. Default: never. */
        expires_at?: string;
        /** The grant's category (default `default`). A lower-case name of 1 to 40 letters, digits and `_`, starting with a letter, e.g. `paid` or `promotional`. */
        category?: string;
        /** Draw only on grants of these categories (1 to 10, each once); refused with `insufficient_credits` when they do not make the amount available. Default: every category. */
        categories?: string[];
        /** Holds: seconds until the hold expires (default 604,800, 7 days). */
        expires_in?: number;
        description?: string;
        /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
        metadata?: Record<string, string>;
        /** The operation's own key, in the same namespace as the single routes' keys. */
        idempotency_key?: string;
      }>;
      /** All operations or none (default false: each on its own). */
      atomic?: boolean;
    };
    status: 200;
    response: {
      object: 'batch';
      results: Array<{
        /** What the single route would have answered: 201, 404, 409, 422… */
        status: number;
        transaction?: Transaction;
        transfer?: Transfer;
        hold?: Hold;
        error?: {
          type: string;
          code: string;
          message: string;
          param?: string;
          request_id: string;
        };
      }>;
    };
  };
  /** Reverse all or part of a credit, debit or transfer */
  'POST /v1/transactions/{id}/reverse': {
    path: {
      /** Begins with `txn_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Credits to give back (default: all that is left to reverse). */
      amount?: number;
      description?: string;
      /** Same as the `Idempotency-Key` header; send one or the other, or the same in both. */
      idempotency_key?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
    };
    status: 201;
    response: Transaction;
  };
  /** Retrieve a credit, debit, expiry, reversal or transfer */
  'GET /v1/transactions/{id}': {
    path: {
      /** Begins with `txn_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Transaction | Transfer;
  };
  /** A wallet's holds, newest first */
  'GET /v1/wallets/{id}/holds': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
      status?: 'pending' | 'captured' | 'voided' | 'expired';
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Hold[];
      has_more: boolean;
    };
  };
  /** Reserve credits: they leave `available` until captured, voided or expired */
  'POST /v1/wallets/{id}/holds': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Credits, a whole number from 1 to 10^12. */
      amount: number;
      description?: string;
      /** Seconds until the hold expires and releases its credits (default 604800, 7 days). */
      expires_in?: number;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      /** Same as the `Idempotency-Key` header; send one or the other, or the same in both. */
      idempotency_key?: string;
      /** Draw only on grants of these categories (1 to 10, each once); refused with `insufficient_credits` when they do not make the amount available. Default: every category. */
      categories?: string[];
    };
    status: 201;
    response: Hold;
  };
  /** Debit all or part of a pending hold; the rest is released */
  'POST /v1/holds/{id}/capture': {
    path: {
      /** Begins with `hld_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** At most the hold; default all of it. */
      amount?: number;
    };
    status: 200;
    response: Hold;
  };
  /** Release a pending hold */
  'POST /v1/holds/{id}/void': {
    path: {
      /** Begins with `hld_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Hold;
  };
  /** Retrieve a hold */
  'GET /v1/holds/{id}': {
    path: {
      /** Begins with `hld_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Hold;
  };
  /** A wallet's grants (its credits by priority and expiry), newest first */
  'GET /v1/wallets/{id}/grants': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Grant[];
      has_more: boolean;
    };
  };
  /** A wallet's recurring grants, newest first */
  'GET /v1/wallets/{id}/recurring-grants': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: RecurringGrant[];
      has_more: boolean;
    };
  };
  /** Credit a wallet once per period (an allowance), from `starts_at` on */
  'POST /v1/wallets/{id}/recurring-grants': {
    path: {
      /** Begins with `wlt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Credits per period, a whole number from 1 to 10^12. */
      amount: number;
      /** The unit of a period; months and years are calendar months anchored on the day of `starts_at`. */
      interval: 'day' | 'week' | 'month' | 'year';
      /** Intervals per period, 1 to 12 (default 1). */
      interval_count?: number;
      /** The start of the first period (default now); may be in the past. */
      starts_at?: string;
      /** `period_end` (the default): each credit expires when its period ends; `never`: they don't. */
      expires?: 'never' | 'period_end';
      /** The grants' category (default `default`). */
      category?: string;
      /** The grants' priority, 0 to 100 (default 50): lower is spent first. */
      priority?: number;
      /** Copied onto every credit. */
      description?: string;
      /** Free-form key/value pairs, copied onto every credit. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
    };
    status: 201;
    response: RecurringGrant;
  };
  /** Retrieve a recurring grant */
  'GET /v1/recurring-grants/{id}': {
    path: {
      /** Begins with `rgr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: RecurringGrant;
  };
  /** Cancel a recurring grant: no further credits; those made stay */
  'DELETE /v1/recurring-grants/{id}': {
    path: {
      /** Begins with `rgr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: RecurringGrant;
  };
  /** Sign up with email and password; sends the verification email */
  'POST /v1/auth/signup': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      email: string;
      /** 8 to 128 characters; not a common breached password. */
      password: string;
      /** Display name, at most 200 characters after trimming. */
      name?: string;
    };
    status: 201;
    response: UserAndSession;
  };
  /** Log in with email and password */
  'POST /v1/auth/login': {
    path: Record<string, never>;
    query: {
      /** `token` answers in shape B: `{session, user: {id, email}, expires_at, refresh_token}`. */
      format?: 'token';
    };
    body: {
      email: string;
      password: string;
    };
    status: 200;
    response: UserAndSession | LoginTokenResponse | MfaChallenge;
  };
  /** End a session: the presented one, or with a secret key the one in `session_id` */
  'POST /v1/auth/logout': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** With a secret key: the session to end, as its token or `svc_ses_<ref>`. Ignored with a session token. */
      session_id?: string;
    };
    status: 204;
    response: undefined;
  };
  /** The link in the verification email: verifies, then shows a small page or redirects */
  'GET /v1/auth/verify-email': {
    path: Record<string, never>;
    query: {
      /** The token from the email. */
      token: string;
    };
    body: undefined;
    status: 200;
    response: string;
  };
  /** Verify an email address with the token from the email */
  'POST /v1/auth/verify-email': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The token from the email. */
      token: string;
    };
    status: 200;
    response: User;
  };
  /** Send the verification email again (rate limited) */
  'POST /v1/auth/verify-email/send': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      user_id: string;
    };
    status: 202;
    response: {
      accepted: true;
    };
  };
  /** Send a password reset email; answers 202 whether or not the account exists */
  'POST /v1/auth/password/forgot': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      email: string;
    };
    status: 202;
    response: {
      accepted: true;
    };
  };
  /** Set a new password with the reset email's token; revokes every session of the user */
  'POST /v1/auth/password/reset': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The token from the email. */
      token: string;
      /** 8 to 128 characters; not a common breached password. */
      password: string;
    };
    status: 200;
    response: User;
  };
  /** Change the session user's password, given the current one; the user's other sessions are revoked */
  'POST /v1/auth/password/change': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      current_password: string;
      /** 8 to 128 characters; not a common breached password. */
      new_password: string;
    };
    status: 200;
    response: User;
  };
  /** Prove again who the session user is, with the password or a second factor, before a sensitive change */
  'POST /v1/users/me/reauthenticate': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The user's password. */
      password?: string;
      /** A current 6-digit code of the authenticator. */
      code?: string;
      /** One of the unused recovery codes; it is used up. */
      recovery_code?: string;
    };
    status: 200;
    response: {
      object: 'reauthentication';
      /** From now until `REAUTH_WINDOW_SECONDS` later, this session may make the changes that need a recent sign-in. */
      reauthenticated_at: string;
    };
  };
  /** The session user's second factors */
  'GET /v1/users/me/mfa': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'mfa';
      user_id: string;
      totp: {
        status: 'none' | 'pending' | 'active';
        activated_at: string | null;
      };
      recovery_codes_left: number;
      methods: Array<'totp' | 'recovery_code'>;
    };
  };
  /** Start enrolling an authenticator app: a new secret, pending until a code confirms it */
  'POST /v1/users/me/mfa/totp': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 201;
    response: {
      /** Base32, for typing into an authenticator app. Shown once. */
      secret: string;
      /** `otpauth://totp/…`, for a QR code. */
      otpauth_url: string;
      status: 'pending';
    };
  };
  /** Turn the authenticator off, with a current code or a recovery code; the recovery codes go with it */
  'DELETE /v1/users/me/mfa/totp': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** A current 6-digit code of the authenticator, or one of the recovery codes. */
      code: string;
    };
    status: 200;
    response: {
      object: 'mfa';
      user_id: string;
      totp: {
        status: 'none' | 'pending' | 'active';
        activated_at: string | null;
      };
      recovery_codes_left: number;
      methods: Array<'totp' | 'recovery_code'>;
    };
  };
  /** Confirm the enrolment with a code: the authenticator becomes active; answers ten recovery codes, once */
  'POST /v1/users/me/mfa/totp/verify': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** A 6-digit code of the authenticator. */
      code: string;
    };
    status: 200;
    response: {
      status: 'active';
      /** Ten single-use codes, `xxxxx-xxxxx`. Shown once. */
      recovery_codes: string[];
    };
  };
  /** A user's second factors */
  'GET /v1/users/{id}/mfa': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'mfa';
      user_id: string;
      totp: {
        status: 'none' | 'pending' | 'active';
        activated_at: string | null;
      };
      recovery_codes_left: number;
      methods: Array<'totp' | 'recovery_code'>;
    };
  };
  /** Reset a user's second factors (a lost phone): the authenticator, its recovery codes and pending sign-ins go */
  'DELETE /v1/users/{id}/mfa': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'mfa';
      user_id: string;
      totp: {
        status: 'none' | 'pending' | 'active';
        activated_at: string | null;
      };
      recovery_codes_left: number;
      methods: Array<'totp' | 'recovery_code'>;
    };
  };
  /** Finish a sign-in that answered `mfa_required`: the mfa_token and a code (or a recovery code) for the session */
  'POST /v1/auth/mfa/verify': {
    path: Record<string, never>;
    query: {
      /** `token` answers in shape B: `{session, user: {id, email}, expires_at, refresh_token}`. */
      format?: 'token';
    };
    body: {
      mfa_token: string;
      code?: string;
      recovery_code?: string;
    };
    status: 200;
    response: UserAndSession | LoginTokenResponse | MfaChallenge;
  };
  /** Email a 6-digit sign-in code; answers 202 whether or not the account exists */
  'POST /v1/auth/email-code': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      email: string;
      /** Create the user (email verified) at verification when nobody has the address. */
      create_user?: boolean;
    };
    status: 202;
    response: {
      accepted: true;
    };
  };
  /** Sign in with the emailed code; creates the user when the code was asked with `create_user: true` */
  'POST /v1/auth/email-code/verify': {
    path: Record<string, never>;
    query: {
      /** `token` answers in shape B: `{session, user: {id, email}, expires_at, refresh_token}`. */
      format?: 'token';
    };
    body: {
      email: string;
      code: string;
    };
    status: 200;
    response: UserAndSession | LoginTokenResponse | MfaChallenge;
  };
  /** A fresh short-lived JWT of the presented session, to verify offline against the project's JWKS */
  'POST /v1/sessions/jwt': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'session_jwt';
      /** Signed with the project's signing key; verify it against `GET /v1/projects/{project_id}/jwks.json`. */
      jwt: string;
      /** Its `exp`: never past the session's own expiry. */
      expires_at: string;
    };
  };
  /** The project's public keys that sign session JWTs (RFC 7517); no credential */
  'GET /v1/projects/{project_id}/jwks.json': {
    path: {
      /** `prj_…`. */
      project_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      keys: Array<{
        kid: string;
        kty: string;
        alg: string;
        use: string;
        [key: string]: unknown;
      }>;
    };
  };
  /** The project's published session JWT signing keys with their status (signing, next, retiring); public halves only */
  'GET /v1/project/signing-keys': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: SigningKey[];
      has_more: boolean;
    };
  };
  /** Make the project's next session JWT signing key sign from now on; the previous stays published until its JWTs expire */
  'POST /v1/project/signing-keys/rotate': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: SigningKey;
  };
  /** Check a session token: `{valid: true, user, session}` or `{valid: false, reason}`; never 404 */
  'POST /v1/sessions/validate': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The whole session token. */
      session_id: string;
    };
    status: 200;
    response:
      | {
          valid: true;
          user: User;
          session: Session;
          /** A fresh JWT of the session, as `POST /v1/sessions/jwt` answers it. */
          jwt: string;
        }
      | {
          valid: false;
          reason: 'expired' | 'revoked' | 'not_found';
        };
  };
  /** Exchange a refresh token (single use) for a new session */
  'POST /v1/sessions/refresh': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      refresh_token: string;
    };
    status: 200;
    response: UserAndSession;
  };
  /** Revoke a session (reason `revoked`) */
  'POST /v1/sessions/{id}/revoke': {
    path: {
      /** `svc_ses_<ref>`, or the whole token. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Session;
  };
  /** A user's sessions that can still be used or refreshed, newest first */
  'GET /v1/users/{id}/sessions': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Session[];
      has_more: boolean;
    };
  };
  /** Revoke every session of a user (reason `revoked`) */
  'POST /v1/users/{id}/sessions/revoke': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      /** The sessions this call revoked. */
      data: Session[];
      has_more: false;
    };
  };
  /** The session's user */
  'GET /v1/users/me': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: User;
  };
  /** List users, newest first; `?email=` finds one by address */
  'GET /v1/users': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
      /** Exact address, compared case-insensitively. */
      email?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: User[];
      has_more: boolean;
    };
  };
  /** Retrieve a user, with the provider accounts linked to it */
  'GET /v1/users/{id}': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      /** Begins with `usr_`. */
      id: string;
      object: 'user';
      email: string;
      name: string;
      email_verified: boolean;
      /** Role keys. */
      roles: string[];
      metadata: Record<string, string>;
      banned: boolean;
      created_at: string;
      updated_at: string;
      identities: Identity[];
    };
  };
  /** Update a user's name, metadata or roles */
  'PATCH /v1/users/{id}': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      name?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
      /** Replaces the role list. */
      roles?: string[];
    };
    status: 200;
    response: User;
  };
  /** Delete a user; its sessions are revoked */
  'DELETE /v1/users/{id}': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'user';
      deleted: true;
    };
  };
  /** Unlink a provider account; refused when it is the last way the user can sign in */
  'DELETE /v1/users/{id}/identities/{provider}': {
    path: {
      /** Begins with `usr_`. */
      id: string;
      provider: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      /** Begins with `usr_`. */
      id: string;
      object: 'user';
      email: string;
      name: string;
      email_verified: boolean;
      /** Role keys. */
      roles: string[];
      metadata: Record<string, string>;
      banned: boolean;
      created_at: string;
      updated_at: string;
      identities: Identity[];
    };
  };
  /** Ban a user: no log in, every session revoked */
  'POST /v1/users/{id}/ban': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: User;
  };
  /** Lift a ban */
  'POST /v1/users/{id}/unban': {
    path: {
      /** Begins with `usr_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: User;
  };
  /** Every role: custom ones newest first, then the built-in ones */
  'GET /v1/roles': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Role[];
      has_more: boolean;
    };
  };
  /** Create a role with permissions */
  'POST /v1/roles': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** Lower-case letters, digits, `_`, `:` and `-`, starting with a letter; at most 64 characters. */
      key: string;
      name: string;
      permissions: string[];
    };
    status: 201;
    response: Role;
  };
  /** Retrieve a role */
  'GET /v1/roles/{key}': {
    path: {
      key: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Role;
  };
  /** Change a custom role's name or permissions */
  'PATCH /v1/roles/{key}': {
    path: {
      key: string;
    };
    query: Record<string, never>;
    body: {
      name?: string;
      permissions?: string[];
    };
    status: 200;
    response: Role;
  };
  /** Delete a custom role; users lose it */
  'DELETE /v1/roles/{key}': {
    path: {
      key: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      key: string;
      object: 'role';
      deleted: true;
    };
  };
  /** Configure a sign-in provider: google, github, apple, or a generic OpenID Connect provider by key */
  'PUT /v1/auth/providers/{provider}': {
    path: {
      /** `google`, `github`, `apple`, or a generic provider key. */
      provider: string;
    };
    query: Record<string, never>;
    body: {
      client_id: string;
      /** Required when the provider is first configured (except Apple); omitted later, the stored one is kept. Never returned. */
      client_secret?: string;
      /** Generic OpenID Connect providers only: the issuer URL, discovered at `/.well-known/openid-configuration`. */
      issuer?: string;
      /** Default: `openid email profile` (Google, generic), `openid email name` (Apple), `read:user user:email` (GitHub). */
      scopes?: string[];
      /** The only redirect URIs a sign-in may use, compared exactly. `https://`, or `http://` on a loopback host; no query or fragment. */
      redirect_uris: string[];
      /** Apple only: the client secret is an ES256 JWT made from these for each exchange. */
      apple?: {
        team_id: string;
        key_id: string;
        /** PEM of the `.p8` key; required the first time; never returned. */
        private_key?: string;
      };
    };
    status: 200;
    response: OAuthProvider;
  };
  /** Remove a provider's configuration; linked identities stay */
  'DELETE /v1/auth/providers/{provider}': {
    path: {
      /** `google`, `github`, `apple`, or a generic provider key. */
      provider: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'oauth_provider';
      provider: string;
      deleted: true;
    };
  };
  /** The project's configured providers (never their secrets) */
  'GET /v1/auth/providers': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: OAuthProvider[];
      has_more: boolean;
    };
  };
  /** Start a sign-in: the provider's URL (PKCE S256, single-use state, nonce for OpenID Connect) */
  'POST /v1/auth/oauth/{provider}': {
    path: {
      /** `google`, `github`, `apple`, or a generic provider key. */
      provider: string;
    };
    query: Record<string, never>;
    body: {
      redirect_uri: string;
      /** Your own state value (16 to 512 URL-safe characters), used once; a random one is made when omitted. */
      state?: string;
    };
    status: 200;
    response: {
      /** The provider's authorization URL: send the browser there. */
      url: string;
      /** Comes back on the redirect URI with the code; valid once, for 10 minutes. */
      state: string;
    };
  };
  /** Finish a sign-in with the code and state from the redirect: the user and a new session */
  'POST /v1/auth/oauth/{provider}/callback': {
    path: {
      /** `google`, `github`, `apple`, or a generic provider key. */
      provider: string;
    };
    query: Record<string, never>;
    body: {
      code: string;
      state: string;
      /** When the redirect carried it (RFC 9207). */
      iss?: string;
    };
    status: 200;
    response: OAuthSignIn | OAuthMfaChallenge;
  };
  /** List organizations, newest first */
  'GET /v1/organizations': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Organization[];
      has_more: boolean;
    };
  };
  /** Create an organization; the slug is derived from the name when absent */
  'POST /v1/organizations': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
      /** Lower-case letters and digits in groups joined by single hyphens, at most 64 characters; unique in the project. */
      slug?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
    };
    status: 201;
    response: Organization;
  };
  /** Retrieve an organization */
  'GET /v1/organizations/{id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Organization;
  };
  /** Change an organization's name, slug or metadata */
  'PATCH /v1/organizations/{id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      name?: string;
      /** Lower-case letters and digits in groups joined by single hyphens, at most 64 characters; unique in the project. */
      slug?: string;
      /** Free-form key/value pairs. Up to 50 keys of 1 to 40 characters, each a string of at most 500 characters. */
      metadata?: Record<string, string>;
    };
    status: 200;
    response: Organization;
  };
  /** Delete an organization with its memberships and invitations */
  'DELETE /v1/organizations/{id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'organization';
      deleted: true;
    };
  };
  /** List the members, newest first; `starting_after` is a user id */
  'GET /v1/organizations/{id}/members': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: OrganizationMembership[];
      has_more: boolean;
    };
  };
  /** Add a user of the project as a member with a role (default `member`) */
  'POST /v1/organizations/{id}/members': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Begins with `usr_`. */
      user_id: string;
      /** Lower-case letters, digits, `_`, `:` and `-`, starting with a letter; at most 64 characters. */
      role?: string;
    };
    status: 201;
    response: OrganizationMembership;
  };
  /** Change a member's role; the last owner cannot be demoted */
  'PATCH /v1/organizations/{id}/members/{user_id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** Begins with `usr_`. */
      user_id: string;
    };
    query: Record<string, never>;
    body: {
      /** Lower-case letters, digits, `_`, `:` and `-`, starting with a letter; at most 64 characters. */
      role: string;
    };
    status: 200;
    response: OrganizationMembership;
  };
  /** Remove a member; the last owner cannot be removed */
  'DELETE /v1/organizations/{id}/members/{user_id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** Begins with `usr_`. */
      user_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'organization_membership';
      organization_id: string;
      user_id: string;
      deleted: true;
    };
  };
  /** Whether a user's role in the organization grants a permission, read from the database on every call */
  'POST /v1/organizations/{id}/authorize': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Begins with `usr_`. */
      user_id: string;
      /** e.g. `invoices:read`. */
      permission: string;
    };
    status: 200;
    response: {
      allowed: boolean;
      /** The user's role in the organization; null when not a member. */
      role: string | null;
    };
  };
  /** List the invitations, newest first, whatever their status */
  'GET /v1/organizations/{id}/invitations': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Invitation[];
      has_more: boolean;
    };
  };
  /** Invite an email address with a role; sends the invitation email. Replaces a pending invitation of the same address */
  'POST /v1/organizations/{id}/invitations': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      email: string;
      /** Lower-case letters, digits, `_`, `:` and `-`, starting with a letter; at most 64 characters. */
      role?: string;
    };
    status: 201;
    response: Invitation;
  };
  /** Revoke a pending invitation; its token stops working */
  'DELETE /v1/organizations/{id}/invitations/{invitation_id}': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** Begins with `inv_`. */
      invitation_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Invitation;
  };
  /** Accept an invitation: the session user's verified email must be the invited address */
  'POST /v1/invitations/accept': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The token from the invitation email. */
      token: string;
    };
    status: 200;
    response: UserOrganizationMembership;
  };
  /** The session user's memberships, newest first, each with its organization; `starting_after` is an organization id */
  'GET /v1/users/me/organizations': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: UserOrganizationMembership[];
      has_more: boolean;
    };
  };
  /** The organization's domains, newest first; `starting_after` is a domain */
  'GET /v1/organizations/{id}/domains': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: OrganizationDomain[];
      has_more: boolean;
    };
  };
  /** Add an email domain: pending until its TXT record is verified, or verified at once with `manual` */
  'POST /v1/organizations/{id}/domains': {
    path: {
      /** Begins with `org_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** A domain name of two or more labels; upper case, a trailing dot and Unicode (stored as punycode) are accepted. */
      domain: string;
      /** `dns`: verified once `POST …/verify` finds the TXT record. `manual`: the operator's own assertion that the organization owns the domain; verified at once. */
      verification: 'dns' | 'manual';
    };
    status: 201;
    response: OrganizationDomain;
  };
  /** Retrieve a domain of the organization, with its status and TXT record */
  'GET /v1/organizations/{id}/domains/{domain}': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** A domain name of two or more labels; upper case, a trailing dot and Unicode (stored as punycode) are accepted. */
      domain: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: OrganizationDomain;
  };
  /** Remove a domain; the organization's SSO connection stops answering for it */
  'DELETE /v1/organizations/{id}/domains/{domain}': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** A domain name of two or more labels; upper case, a trailing dot and Unicode (stored as punycode) are accepted. */
      domain: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'organization_domain';
      organization_id: string;
      domain: string;
      deleted: true;
    };
  };
  /** Look the TXT record up and mark the domain verified when it holds the value; a verified domain answers as it is */
  'POST /v1/organizations/{id}/domains/{domain}/verify': {
    path: {
      /** Begins with `org_`. */
      id: string;
      /** A domain name of two or more labels; upper case, a trailing dot and Unicode (stored as punycode) are accepted. */
      domain: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: OrganizationDomain;
  };
  /** The organization's SSO connections */
  'GET /v1/organizations/{id}/sso-connections': {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: SsoConnection[];
      has_more: boolean;
    };
  };
  /** Create the organization's SSO connection (OIDC or SAML) with its email domains */
  'POST /v1/organizations/{id}/sso-connections': {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      type: 'oidc' | 'saml';
      /** Email domains whose users sign in through this connection; a domain belongs to one connection of the project. */
      domains: string[];
      /** Where a sign-in may send the browser back with its code, compared exactly: `https://`, or `http://` on a loopback host; no query or fragment. The first is where IdP-initiated sign-ins go unless their RelayState names another one of the list. */
      redirect_uris: string[];
      oidc?: {
        /** Discovered at `/.well-known/openid-configuration`. */
        issuer: string;
        client_id: string;
        /** Sealed at rest; never returned. */
        client_secret: string;
      };
      saml?: {
        idp_entity_id: string;
        /** The HTTP-Redirect SingleSignOnService URL. */
        idp_sso_url: string;
        /** The X.509 signing certificate (PEM or base64): the only key whose signatures are accepted. */
        idp_certificate: string;
      };
      /** The role of members created at their first sign-in; default `member`. */
      default_role?: string;
      /** SAML only: accept sign-ins the identity provider starts (no AuthnRequest). Default false. */
      allow_idp_initiated?: boolean;
    };
    status: 201;
    response: SsoConnection;
  };
  /** Delete an SSO connection */
  'DELETE /v1/organizations/{id}/sso-connections/{connection_id}': {
    path: {
      id: string;
      connection_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'sso_connection';
      deleted: true;
    };
  };
  /** Start an SSO sign-in by email domain or organization: the identity provider's URL */
  'POST /v1/auth/sso': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** Routes by the address's domain. */
      email?: string;
      organization_id?: string;
      redirect_uri: string;
      /** Handed back unchanged on the redirect with the code. */
      state?: string;
    };
    status: 200;
    response: {
      /** The identity provider's URL: send the browser there. */
      url: string;
    };
  };
  /** Exchange the one-time code from the redirect for the user, a session and the organization */
  'POST /v1/auth/sso/callback': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      code: string;
    };
    status: 200;
    response: SsoSignIn | SsoMfaChallenge;
  };
  /** Where OpenID Connect identity providers send the browser back (public) */
  'GET /v1/auth/sso/oidc/callback': {
    path: Record<string, never>;
    query: {
      state?: string;
      code?: string;
      iss?: string;
      error?: string;
      error_description?: string;
      session_state?: string;
    };
    body: undefined;
    status: 303;
    response: undefined;
  };
  /** A SAML connection's service provider metadata (public, stable URL) */
  'GET /v1/auth/sso/saml/{connection_id}/metadata': {
    path: {
      connection_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: string;
  };
  /** Creation options for a new passkey of the session's user */
  'POST /v1/users/me/passkeys/options': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      /** base64url; single use, valid 5 minutes. */
      challenge: string;
      rp: {
        id: string;
        name: string;
      };
      user: {
        /** The user handle, base64url of the `usr_` id. */
        id: string;
        name: string;
        displayName: string;
      };
      pubKeyCredParams: Array<{
        type: 'public-key';
        alg: number;
      }>;
      /** Milliseconds. */
      timeout?: number;
      /** The user's passkeys already registered. */
      excludeCredentials?: Array<{
        /** A credential id, base64url. */
        id: string;
        type: 'public-key';
        transports?: string[];
      }>;
      /** `residentKey: required`, `userVerification: required`. */
      authenticatorSelection?: Record<string, unknown>;
      /** `none`. */
      attestation?: string;
      /** WebAuthn extensions. */
      extensions?: Record<string, unknown>;
      hints?: string[];
      [key: string]: unknown;
    };
  };
  /** The session user's passkeys, newest first */
  'GET /v1/users/me/passkeys': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Passkey[];
      has_more: boolean;
    };
  };
  /** Register a passkey for the session's user with the authenticator's response */
  'POST /v1/users/me/passkeys': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** The result of `navigator.credentials.create()` as `PublicKeyCredential.toJSON()` gives it. */
      response: {
        /** The authenticator credential id, base64url. */
        id: string;
        /** The authenticator credential id, base64url. */
        rawId: string;
        type: 'public-key';
        authenticatorAttachment?: string;
        /** As the browser gives them. */
        clientExtensionResults?: Record<string, unknown>;
        response: {
          /** The client data, base64url. */
          clientDataJSON: string;
          /** The attestation object, base64url. */
          attestationObject: string;
          /** The authenticator data, base64url. */
          authenticatorData?: string;
          transports?: string[];
          publicKeyAlgorithm?: number;
          /** The public key (SPKI), base64url. */
          publicKey?: string;
          [key: string]: unknown;
        };
        [key: string]: unknown;
      };
      /** A label for the user, 1 to 100 characters; default "Passkey". */
      name?: string;
    };
    status: 201;
    response: Passkey;
  };
  /** Remove one of the session user's passkeys; it signs no one in any more */
  'DELETE /v1/users/me/passkeys/{id}': {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'passkey';
      deleted: true;
    };
  };
  /** A user's passkeys, newest first */
  'GET /v1/users/{id}/passkeys': {
    path: {
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Passkey[];
      has_more: boolean;
    };
  };
  /** Remove one of a user's passkeys (a lost device, an operator's reset) */
  'DELETE /v1/users/{id}/passkeys/{passkey_id}': {
    path: {
      id: string;
      passkey_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'passkey';
      deleted: true;
    };
  };
  /** Request options for a passkey sign-in, with their `challenge_id` */
  'POST /v1/auth/passkey/options': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** Whose passkeys may answer. Without it the options allow any of the project's passkeys (discoverable credentials). */
      email?: string;
    };
    status: 200;
    response: {
      /** `pkc_…`: send it back with the response to `POST /v1/auth/passkey`. */
      challenge_id: string;
      /** base64url; single use, valid 5 minutes. */
      challenge: string;
      rpId: string;
      /** Milliseconds. */
      timeout?: number;
      /** With an email, that user's passkeys; empty: any discoverable passkey. */
      allowCredentials?: Array<{
        /** A credential id, base64url. */
        id: string;
        type: 'public-key';
        transports?: string[];
      }>;
      /** `required`. */
      userVerification?: string;
      /** WebAuthn extensions. */
      extensions?: Record<string, unknown>;
      hints?: string[];
      [key: string]: unknown;
    };
  };
  /** Sign in with a passkey: the authenticator's answer to the sign-in options */
  'POST /v1/auth/passkey': {
    path: Record<string, never>;
    query: {
      /** `token` answers in shape B: `{session, user: {id, email}, expires_at, refresh_token}`. */
      format?: 'token';
    };
    body: {
      /** From `POST /v1/auth/passkey/options`, `pkc_…`. */
      challenge_id: string;
      /** The result of `navigator.credentials.get()` as `PublicKeyCredential.toJSON()` gives it. */
      response: {
        /** The authenticator credential id, base64url. */
        id: string;
        /** The authenticator credential id, base64url. */
        rawId: string;
        type: 'public-key';
        authenticatorAttachment?: string;
        /** As the browser gives them. */
        clientExtensionResults?: Record<string, unknown>;
        response: {
          /** The client data, base64url. */
          clientDataJSON: string;
          /** The authenticator data, base64url. */
          authenticatorData: string;
          /** The assertion signature, base64url. */
          signature: string;
          /** The user handle the authenticator keeps, base64url. */
          userHandle?: string;
          [key: string]: unknown;
        };
        [key: string]: unknown;
      };
    };
    status: 200;
    response: UserAndSession | LoginTokenResponse;
  };
  /** The session user's balance and last 20 transactions */
  'GET /v1/wallet/balance': {
    path: Record<string, never>;
    query: {
      /** A wallet of the session user; default: their oldest active wallet (in `currency` when given). */
      wallet_id?: string;
      /** The session user's oldest active wallet in this unit (404 `resource_missing` when they have none). With `wallet_id`, it must be that wallet's unit (else 400 `parameter_invalid`). */
      currency?: string;
    };
    body: undefined;
    status: 200;
    response: {
      balance: Balance;
      /** The last 20 transactions of the wallet, newest first. */
      transactions: WalletTransaction[];
    };
  };
  /** List webhook endpoints, newest first */
  'GET /v1/webhooks': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: WebhookEndpoint[];
      has_more: boolean;
    };
  };
  /** Create a webhook endpoint; the response carries its secret, shown only here and at rotation */
  'POST /v1/webhooks': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      /** An https:// URL whose host is public: not loopback, private, link-local, CGNAT, multicast or a metadata address. */
      url: string;
      /** Event types from the catalog, or `["*"]` for every type. */
      events: string[];
      description?: string;
      rate_limit_per_second?: number | null;
    };
    status: 201;
    response: {
      /** Begins with `we_`. */
      id: string;
      object: 'webhook_endpoint';
      url: string;
      events: string[];
      description: string | null;
      enabled: boolean;
      disabled_reason: 'failing' | 'manual' | null;
      rate_limit_per_second: number | null;
      created_at: string;
      /** `whsec_…`: shown only here, at creation and at rotation. Verify signatures with it. */
      secret: string;
    };
  };
  /** Retrieve a webhook endpoint */
  'GET /v1/webhooks/{id}': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: WebhookEndpoint;
  };
  /** Change the URL, event types, description, or switch the endpoint off and on */
  'PATCH /v1/webhooks/{id}': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** An https:// URL whose host is public: not loopback, private, link-local, CGNAT, multicast or a metadata address. */
      url?: string;
      /** Event types from the catalog, or `["*"]` for every type. */
      events?: string[];
      description?: string | null;
      /** false stops deliveries to this endpoint (`disabled_reason: "manual"`); true resumes them, also after an automatic switch-off, and starts a fresh failure window. */
      enabled?: boolean;
      rate_limit_per_second?: number | null;
    };
    status: 200;
    response: WebhookEndpoint;
  };
  /** Delete a webhook endpoint and its delivery log */
  'DELETE /v1/webhooks/{id}': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      id: string;
      object: 'webhook_endpoint';
      deleted: true;
    };
  };
  /** A new secret; the old one keeps signing beside it for 24 hours */
  'POST /v1/webhooks/{id}/rotate-secret': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      /** Begins with `we_`. */
      id: string;
      object: 'webhook_endpoint';
      url: string;
      events: string[];
      description: string | null;
      enabled: boolean;
      disabled_reason: 'failing' | 'manual' | null;
      rate_limit_per_second: number | null;
      created_at: string;
      /** `whsec_…`: shown only here, at creation and at rotation. Verify signatures with it. */
      secret: string;
    };
  };
  /** Send a webhook.test event to this endpoint alone */
  'POST /v1/webhooks/{id}/test': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 201;
    response: WebhookDelivery;
  };
  /** Send again, in event order, every subscribed event since a time that was not delivered to this endpoint */
  'POST /v1/webhooks/{id}/recover': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: Record<string, never>;
    body: {
      /** Re-send what was not delivered from this time on: not in the future, within the event retention (`EVENT_RETENTION_DAYS`). */
      since: string;
    };
    status: 202;
    response: {
      object: 'recovery';
      /** Deliveries made due again or created, sent in event order. */
      deliveries: number;
    };
  };
  /** The endpoint's deliveries with their attempts, newest first */
  'GET /v1/webhooks/{id}/deliveries': {
    path: {
      /** Begins with `we_`. */
      id: string;
    };
    query: {
      limit?: number;
      starting_after?: string;
      status?: 'pending' | 'succeeded' | 'failed';
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: WebhookDelivery[];
      has_more: boolean;
    };
  };
  /** Retrieve a delivery with its attempts */
  'GET /v1/webhooks/{id}/deliveries/{delivery_id}': {
    path: {
      /** Begins with `we_`. */
      id: string;
      /** Begins with `del_`. */
      delivery_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: WebhookDelivery;
  };
  /** Send a delivery again now, also one that failed; answers with the delivery and the new attempt */
  'POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry': {
    path: {
      /** Begins with `we_`. */
      id: string;
      /** Begins with `del_`. */
      delivery_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: WebhookDelivery;
  };
  /** List events, newest first */
  'GET /v1/events': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
      /** Only events of this type. */
      type?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Event[];
      has_more: boolean;
    };
  };
  /** Retrieve an event */
  'GET /v1/events/{id}': {
    path: {
      /** Begins with `evt_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: Event;
  };
  /** List the event types the service emits, with a JSON Schema of each one's data */
  'GET /v1/event-types': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: EventType[];
      has_more: false;
    };
  };
  /** List audit log entries, newest first */
  'GET /v1/audit-logs': {
    path: Record<string, never>;
    query: {
      limit?: number;
      starting_after?: string;
      /** Only this action, e.g. `wallet.credit`. */
      action?: string;
      /** Only this key (`key_…`) or session (`svc_ses_…`). */
      actor_id?: string;
      /** Only entries about this wallet, user, endpoint… */
      resource_id?: string;
      /** Entries created at or after this time. */
      since?: string;
      /** Entries created before this time. */
      until?: string;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: AuditLogEntry[];
      has_more: boolean;
    };
  };
  /** Export audit log entries as JSON lines (application/x-ndjson), oldest first, streamed */
  'GET /v1/audit-logs/export': {
    path: Record<string, never>;
    query: {
      /** Entries created at or after this time. */
      since?: string;
      /** Entries created before this time. */
      until?: string;
    };
    body: undefined;
    status: 200;
    response: string;
  };
  /** Retrieve an audit log entry */
  'GET /v1/audit-logs/{id}': {
    path: {
      /** Begins with `aud_`. */
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: AuditLogEntry;
  };
  /** Users, wallets, credits in circulation, events today */
  'GET /v1/stats/overview': {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    status: 200;
    response: {
      object: 'stats.overview';
      users: number;
      wallets: number;
      /** The sum of every wallet balance. Capped at 9007199254740991 (2^53 - 1): exact below that, that value when the true sum is larger (docs/api.md, Statistics). */
      credits_in_circulation: number;
      /** Events since 00:00 UTC. */
      events_today: number;
      as_of: string;
    };
  };
  /** Credits added and deducted per UTC day, oldest first */
  'GET /v1/stats/credits': {
    path: Record<string, never>;
    query: {
      days?: number;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Array<{
        day: string;
        /** Credits added that day. Capped at 9007199254740991 (2^53 - 1): exact below that, that value when the true sum is larger (docs/api.md, Statistics). */
        added: number;
        /** Credits deducted that day. Capped at 9007199254740991 (2^53 - 1): exact below that, that value when the true sum is larger (docs/api.md, Statistics). */
        deducted: number;
        credit_count: number;
        debit_count: number;
      }>;
      has_more: false;
    };
  };
  /** Webhook attempts per UTC day: success rate and latency, oldest first */
  'GET /v1/stats/webhooks': {
    path: Record<string, never>;
    query: {
      days?: number;
    };
    body: undefined;
    status: 200;
    response: {
      object: 'list';
      data: Array<{
        day: string;
        attempts: number;
        succeeded: number;
        success_rate: number | null;
        latency_ms_avg: number | null;
        latency_ms_max: number | null;
      }>;
      has_more: false;
    };
  };
  /** A SAML connection's AssertionConsumerService (HTTP-POST binding, public) */
  'POST /v1/auth/sso/saml/{connection_id}/acs': {
    path: {
      connection_id: string;
    };
    query: Record<string, never>;
    body: {
      SAMLResponse: string;
      RelayState?: string;
    };
    status: 303;
    response: undefined;
  };
}

/**
 * Every operation by its `operationId`: method, path template, the credential it takes
 * (`secret`, `session`, `any` or `public`), how its body is sent, and whether it is a list that
 * pages with `starting_after`. The clients turn each entry into a method of `operations`.
 */
export const operations = {
  /** `GET /healthz`: The process is up */
  getHealth: { method: 'GET', path: '/healthz', credential: 'public', body: 'none', list: false },
  /** `GET /readyz`: The database answers */
  getReadiness: { method: 'GET', path: '/readyz', credential: 'public', body: 'none', list: false },
  /** `GET /metrics`: Prometheus metrics, in the Prometheus text format */
  getMetrics: { method: 'GET', path: '/metrics', credential: 'public', body: 'none', list: false },
  /** `GET /v1/openapi.json`: This API as OpenAPI 3.1 */
  getOpenApiDocument: { method: 'GET', path: '/v1/openapi.json', credential: 'public', body: 'none', list: false },
  /** `GET /v1/project`: The project the secret key belongs to */
  getProject: { method: 'GET', path: '/v1/project', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/project`: Change the project's name or its passkey relying party (`webauthn`) */
  updateProject: { method: 'PATCH', path: '/v1/project', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/api-keys`: The project's secret keys, newest first, by prefix and last four characters */
  listApiKeys: { method: 'GET', path: '/v1/api-keys', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/api-keys`: Create a secret key; the response carries the key, shown only here */
  createApiKey: { method: 'POST', path: '/v1/api-keys', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/api-keys/{id}/revoke`: Revoke a secret key at once; its dashboard sessions end with it. Not the key making the request */
  revokeApiKey: { method: 'POST', path: '/v1/api-keys/{id}/revoke', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/wallets`: List wallets, newest first */
  listWallets: { method: 'GET', path: '/v1/wallets', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/wallets`: Create a wallet */
  createWallet: { method: 'POST', path: '/v1/wallets', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/wallets/{id}`: Retrieve a wallet */
  getWallet: { method: 'GET', path: '/v1/wallets/{id}', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/wallets/{id}`: Update metadata, the low-balance threshold or the credit limit */
  updateWallet: { method: 'PATCH', path: '/v1/wallets/{id}', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/wallets/{id}/freeze`: Freeze a wallet: it refuses credits, debits and transfers */
  freezeWallet: { method: 'POST', path: '/v1/wallets/{id}/freeze', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/wallets/{id}/unfreeze`: Unfreeze a frozen wallet */
  unfreezeWallet: { method: 'POST', path: '/v1/wallets/{id}/unfreeze', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/wallets/{id}/close`: Close an empty wallet for good */
  closeWallet: { method: 'POST', path: '/v1/wallets/{id}/close', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/wallets/{id}/balance`: A wallet's balance, now or at a past time */
  getWalletBalance: { method: 'GET', path: '/v1/wallets/{id}/balance', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/wallets/{id}/credits`: Add credits */
  creditWallet: { method: 'POST', path: '/v1/wallets/{id}/credits', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/wallets/{id}/debits`: Deduct credits */
  debitWallet: { method: 'POST', path: '/v1/wallets/{id}/debits', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/wallets/{id}/transactions`: A wallet's transactions, newest first */
  listWalletTransactions: { method: 'GET', path: '/v1/wallets/{id}/transactions', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/wallets/transfer`: Move credits between two wallets */
  transferCredits: { method: 'POST', path: '/v1/wallets/transfer', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/wallets/batch`: Apply up to 1,000 credits, debits, transfers, holds, captures, voids and reversals, each on its own or all or nothing */
  batchWalletOperations: { method: 'POST', path: '/v1/wallets/batch', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/transactions/{id}/reverse`: Reverse all or part of a credit, debit or transfer */
  reverseTransaction: { method: 'POST', path: '/v1/transactions/{id}/reverse', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/transactions/{id}`: Retrieve a credit, debit, expiry, reversal or transfer */
  getTransaction: { method: 'GET', path: '/v1/transactions/{id}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/wallets/{id}/holds`: A wallet's holds, newest first */
  listHolds: { method: 'GET', path: '/v1/wallets/{id}/holds', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/wallets/{id}/holds`: Reserve credits: they leave `available` until captured, voided or expired */
  createHold: { method: 'POST', path: '/v1/wallets/{id}/holds', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/holds/{id}/capture`: Debit all or part of a pending hold; the rest is released */
  captureHold: { method: 'POST', path: '/v1/holds/{id}/capture', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/holds/{id}/void`: Release a pending hold */
  voidHold: { method: 'POST', path: '/v1/holds/{id}/void', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/holds/{id}`: Retrieve a hold */
  getHold: { method: 'GET', path: '/v1/holds/{id}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/wallets/{id}/grants`: A wallet's grants (its credits by priority and expiry), newest first */
  listGrants: { method: 'GET', path: '/v1/wallets/{id}/grants', credential: 'secret', body: 'none', list: true },
  /** `GET /v1/wallets/{id}/recurring-grants`: A wallet's recurring grants, newest first */
  listRecurringGrants: { method: 'GET', path: '/v1/wallets/{id}/recurring-grants', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/wallets/{id}/recurring-grants`: Credit a wallet once per period (an allowance), from `starts_at` on */
  createRecurringGrant: { method: 'POST', path: '/v1/wallets/{id}/recurring-grants', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/recurring-grants/{id}`: Retrieve a recurring grant */
  getRecurringGrant: { method: 'GET', path: '/v1/recurring-grants/{id}', credential: 'secret', body: 'none', list: false },
  /** `DELETE /v1/recurring-grants/{id}`: Cancel a recurring grant: no further credits; those made stay */
  cancelRecurringGrant: { method: 'DELETE', path: '/v1/recurring-grants/{id}', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/auth/signup`: Sign up with email and password; sends the verification email */
  signUp: { method: 'POST', path: '/v1/auth/signup', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/login`: Log in with email and password */
  logIn: { method: 'POST', path: '/v1/auth/login', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/logout`: End a session: the presented one, or with a secret key the one in `session_id` */
  logOut: { method: 'POST', path: '/v1/auth/logout', credential: 'any', body: 'json', list: false },
  /** `GET /v1/auth/verify-email`: The link in the verification email: verifies, then shows a small page or redirects */
  openEmailVerificationLink: { method: 'GET', path: '/v1/auth/verify-email', credential: 'public', body: 'none', list: false },
  /** `POST /v1/auth/verify-email`: Verify an email address with the token from the email */
  verifyEmail: { method: 'POST', path: '/v1/auth/verify-email', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/verify-email/send`: Send the verification email again (rate limited) */
  sendVerificationEmail: { method: 'POST', path: '/v1/auth/verify-email/send', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/password/forgot`: Send a password reset email; answers 202 whether or not the account exists */
  forgotPassword: { method: 'POST', path: '/v1/auth/password/forgot', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/password/reset`: Set a new password with the reset email's token; revokes every session of the user */
  resetPassword: { method: 'POST', path: '/v1/auth/password/reset', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/password/change`: Change the session user's password, given the current one; the user's other sessions are revoked */
  changePassword: { method: 'POST', path: '/v1/auth/password/change', credential: 'session', body: 'json', list: false },
  /** `POST /v1/users/me/reauthenticate`: Prove again who the session user is, with the password or a second factor, before a sensitive change */
  reauthenticate: { method: 'POST', path: '/v1/users/me/reauthenticate', credential: 'session', body: 'json', list: false },
  /** `GET /v1/users/me/mfa`: The session user's second factors */
  getMyMfa: { method: 'GET', path: '/v1/users/me/mfa', credential: 'session', body: 'none', list: false },
  /** `POST /v1/users/me/mfa/totp`: Start enrolling an authenticator app: a new secret, pending until a code confirms it */
  enrollTotp: { method: 'POST', path: '/v1/users/me/mfa/totp', credential: 'session', body: 'none', list: false },
  /** `DELETE /v1/users/me/mfa/totp`: Turn the authenticator off, with a current code or a recovery code; the recovery codes go with it */
  disableTotp: { method: 'DELETE', path: '/v1/users/me/mfa/totp', credential: 'session', body: 'json', list: false },
  /** `POST /v1/users/me/mfa/totp/verify`: Confirm the enrolment with a code: the authenticator becomes active; answers ten recovery codes, once */
  confirmTotp: { method: 'POST', path: '/v1/users/me/mfa/totp/verify', credential: 'session', body: 'json', list: false },
  /** `GET /v1/users/{id}/mfa`: A user's second factors */
  getUserMfa: { method: 'GET', path: '/v1/users/{id}/mfa', credential: 'secret', body: 'none', list: false },
  /** `DELETE /v1/users/{id}/mfa`: Reset a user's second factors (a lost phone): the authenticator, its recovery codes and pending sign-ins go */
  resetUserMfa: { method: 'DELETE', path: '/v1/users/{id}/mfa', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/auth/mfa/verify`: Finish a sign-in that answered `mfa_required`: the mfa_token and a code (or a recovery code) for the session */
  verifyMfa: { method: 'POST', path: '/v1/auth/mfa/verify', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/email-code`: Email a 6-digit sign-in code; answers 202 whether or not the account exists */
  sendEmailCode: { method: 'POST', path: '/v1/auth/email-code', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/email-code/verify`: Sign in with the emailed code; creates the user when the code was asked with `create_user: true` */
  verifyEmailCode: { method: 'POST', path: '/v1/auth/email-code/verify', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/sessions/jwt`: A fresh short-lived JWT of the presented session, to verify offline against the project's JWKS */
  createSessionJwt: { method: 'POST', path: '/v1/sessions/jwt', credential: 'session', body: 'none', list: false },
  /** `GET /v1/projects/{project_id}/jwks.json`: The project's public keys that sign session JWTs (RFC 7517); no credential */
  getProjectJwks: { method: 'GET', path: '/v1/projects/{project_id}/jwks.json', credential: 'public', body: 'none', list: false },
  /** `GET /v1/project/signing-keys`: The project's published session JWT signing keys with their status (signing, next, retiring); public halves only */
  listSigningKeys: { method: 'GET', path: '/v1/project/signing-keys', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/project/signing-keys/rotate`: Make the project's next session JWT signing key sign from now on; the previous stays published until its JWTs expire */
  rotateSigningKey: { method: 'POST', path: '/v1/project/signing-keys/rotate', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/sessions/validate`: Check a session token: `{valid: true, user, session}` or `{valid: false, reason}`; never 404 */
  validateSession: { method: 'POST', path: '/v1/sessions/validate', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/sessions/refresh`: Exchange a refresh token (single use) for a new session */
  refreshSession: { method: 'POST', path: '/v1/sessions/refresh', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/sessions/{id}/revoke`: Revoke a session (reason `revoked`) */
  revokeSession: { method: 'POST', path: '/v1/sessions/{id}/revoke', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/users/{id}/sessions`: A user's sessions that can still be used or refreshed, newest first */
  listUserSessions: { method: 'GET', path: '/v1/users/{id}/sessions', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/users/{id}/sessions/revoke`: Revoke every session of a user (reason `revoked`) */
  revokeUserSessions: { method: 'POST', path: '/v1/users/{id}/sessions/revoke', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/users/me`: The session's user */
  getCurrentUser: { method: 'GET', path: '/v1/users/me', credential: 'session', body: 'none', list: false },
  /** `GET /v1/users`: List users, newest first; `?email=` finds one by address */
  listUsers: { method: 'GET', path: '/v1/users', credential: 'secret', body: 'none', list: true },
  /** `GET /v1/users/{id}`: Retrieve a user, with the provider accounts linked to it */
  getUser: { method: 'GET', path: '/v1/users/{id}', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/users/{id}`: Update a user's name, metadata or roles */
  updateUser: { method: 'PATCH', path: '/v1/users/{id}', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/users/{id}`: Delete a user; its sessions are revoked */
  deleteUser: { method: 'DELETE', path: '/v1/users/{id}', credential: 'secret', body: 'none', list: false },
  /** `DELETE /v1/users/{id}/identities/{provider}`: Unlink a provider account; refused when it is the last way the user can sign in */
  unlinkUserIdentity: { method: 'DELETE', path: '/v1/users/{id}/identities/{provider}', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/users/{id}/ban`: Ban a user: no log in, every session revoked */
  banUser: { method: 'POST', path: '/v1/users/{id}/ban', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/users/{id}/unban`: Lift a ban */
  unbanUser: { method: 'POST', path: '/v1/users/{id}/unban', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/roles`: Every role: custom ones newest first, then the built-in ones */
  listRoles: { method: 'GET', path: '/v1/roles', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/roles`: Create a role with permissions */
  createRole: { method: 'POST', path: '/v1/roles', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/roles/{key}`: Retrieve a role */
  getRole: { method: 'GET', path: '/v1/roles/{key}', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/roles/{key}`: Change a custom role's name or permissions */
  updateRole: { method: 'PATCH', path: '/v1/roles/{key}', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/roles/{key}`: Delete a custom role; users lose it */
  deleteRole: { method: 'DELETE', path: '/v1/roles/{key}', credential: 'secret', body: 'none', list: false },
  /** `PUT /v1/auth/providers/{provider}`: Configure a sign-in provider: google, github, apple, or a generic OpenID Connect provider by key */
  configureOAuthProvider: { method: 'PUT', path: '/v1/auth/providers/{provider}', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/auth/providers/{provider}`: Remove a provider's configuration; linked identities stay */
  deleteOAuthProvider: { method: 'DELETE', path: '/v1/auth/providers/{provider}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/auth/providers`: The project's configured providers (never their secrets) */
  listOAuthProviders: { method: 'GET', path: '/v1/auth/providers', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/auth/oauth/{provider}`: Start a sign-in: the provider's URL (PKCE S256, single-use state, nonce for OpenID Connect) */
  startOAuth: { method: 'POST', path: '/v1/auth/oauth/{provider}', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/oauth/{provider}/callback`: Finish a sign-in with the code and state from the redirect: the user and a new session */
  completeOAuth: { method: 'POST', path: '/v1/auth/oauth/{provider}/callback', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/organizations`: List organizations, newest first */
  listOrganizations: { method: 'GET', path: '/v1/organizations', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/organizations`: Create an organization; the slug is derived from the name when absent */
  createOrganization: { method: 'POST', path: '/v1/organizations', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/organizations/{id}`: Retrieve an organization */
  getOrganization: { method: 'GET', path: '/v1/organizations/{id}', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/organizations/{id}`: Change an organization's name, slug or metadata */
  updateOrganization: { method: 'PATCH', path: '/v1/organizations/{id}', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/organizations/{id}`: Delete an organization with its memberships and invitations */
  deleteOrganization: { method: 'DELETE', path: '/v1/organizations/{id}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/organizations/{id}/members`: List the members, newest first; `starting_after` is a user id */
  listOrganizationMembers: { method: 'GET', path: '/v1/organizations/{id}/members', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/organizations/{id}/members`: Add a user of the project as a member with a role (default `member`) */
  addOrganizationMember: { method: 'POST', path: '/v1/organizations/{id}/members', credential: 'secret', body: 'json', list: false },
  /** `PATCH /v1/organizations/{id}/members/{user_id}`: Change a member's role; the last owner cannot be demoted */
  updateOrganizationMember: {
    method: 'PATCH',
    path: '/v1/organizations/{id}/members/{user_id}',
    credential: 'secret',
    body: 'json',
    list: false,
  },
  /** `DELETE /v1/organizations/{id}/members/{user_id}`: Remove a member; the last owner cannot be removed */
  removeOrganizationMember: {
    method: 'DELETE',
    path: '/v1/organizations/{id}/members/{user_id}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `POST /v1/organizations/{id}/authorize`: Whether a user's role in the organization grants a permission, read from the database on every call */
  checkOrganizationPermission: {
    method: 'POST',
    path: '/v1/organizations/{id}/authorize',
    credential: 'secret',
    body: 'json',
    list: false,
  },
  /** `GET /v1/organizations/{id}/invitations`: List the invitations, newest first, whatever their status */
  listOrganizationInvitations: {
    method: 'GET',
    path: '/v1/organizations/{id}/invitations',
    credential: 'secret',
    body: 'none',
    list: true,
  },
  /** `POST /v1/organizations/{id}/invitations`: Invite an email address with a role; sends the invitation email. Replaces a pending invitation of the same address */
  createOrganizationInvitation: {
    method: 'POST',
    path: '/v1/organizations/{id}/invitations',
    credential: 'secret',
    body: 'json',
    list: false,
  },
  /** `DELETE /v1/organizations/{id}/invitations/{invitation_id}`: Revoke a pending invitation; its token stops working */
  revokeOrganizationInvitation: {
    method: 'DELETE',
    path: '/v1/organizations/{id}/invitations/{invitation_id}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `POST /v1/invitations/accept`: Accept an invitation: the session user's verified email must be the invited address */
  acceptInvitation: { method: 'POST', path: '/v1/invitations/accept', credential: 'session', body: 'json', list: false },
  /** `GET /v1/users/me/organizations`: The session user's memberships, newest first, each with its organization; `starting_after` is an organization id */
  listCurrentUserOrganizations: { method: 'GET', path: '/v1/users/me/organizations', credential: 'session', body: 'none', list: true },
  /** `GET /v1/organizations/{id}/domains`: The organization's domains, newest first; `starting_after` is a domain */
  listOrganizationDomains: { method: 'GET', path: '/v1/organizations/{id}/domains', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/organizations/{id}/domains`: Add an email domain: pending until its TXT record is verified, or verified at once with `manual` */
  addOrganizationDomain: { method: 'POST', path: '/v1/organizations/{id}/domains', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/organizations/{id}/domains/{domain}`: Retrieve a domain of the organization, with its status and TXT record */
  getOrganizationDomain: {
    method: 'GET',
    path: '/v1/organizations/{id}/domains/{domain}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `DELETE /v1/organizations/{id}/domains/{domain}`: Remove a domain; the organization's SSO connection stops answering for it */
  deleteOrganizationDomain: {
    method: 'DELETE',
    path: '/v1/organizations/{id}/domains/{domain}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `POST /v1/organizations/{id}/domains/{domain}/verify`: Look the TXT record up and mark the domain verified when it holds the value; a verified domain answers as it is */
  verifyOrganizationDomain: {
    method: 'POST',
    path: '/v1/organizations/{id}/domains/{domain}/verify',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `GET /v1/organizations/{id}/sso-connections`: The organization's SSO connections */
  listSsoConnections: { method: 'GET', path: '/v1/organizations/{id}/sso-connections', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/organizations/{id}/sso-connections`: Create the organization's SSO connection (OIDC or SAML) with its email domains */
  createSsoConnection: { method: 'POST', path: '/v1/organizations/{id}/sso-connections', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/organizations/{id}/sso-connections/{connection_id}`: Delete an SSO connection */
  deleteSsoConnection: {
    method: 'DELETE',
    path: '/v1/organizations/{id}/sso-connections/{connection_id}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `POST /v1/auth/sso`: Start an SSO sign-in by email domain or organization: the identity provider's URL */
  startSso: { method: 'POST', path: '/v1/auth/sso', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/sso/callback`: Exchange the one-time code from the redirect for the user, a session and the organization */
  completeSso: { method: 'POST', path: '/v1/auth/sso/callback', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/auth/sso/oidc/callback`: Where OpenID Connect identity providers send the browser back (public) */
  receiveSsoOidcCallback: { method: 'GET', path: '/v1/auth/sso/oidc/callback', credential: 'public', body: 'none', list: false },
  /** `GET /v1/auth/sso/saml/{connection_id}/metadata`: A SAML connection's service provider metadata (public, stable URL) */
  getSamlMetadata: { method: 'GET', path: '/v1/auth/sso/saml/{connection_id}/metadata', credential: 'public', body: 'none', list: false },
  /** `POST /v1/users/me/passkeys/options`: Creation options for a new passkey of the session's user */
  createPasskeyRegistrationOptions: {
    method: 'POST',
    path: '/v1/users/me/passkeys/options',
    credential: 'session',
    body: 'none',
    list: false,
  },
  /** `GET /v1/users/me/passkeys`: The session user's passkeys, newest first */
  listMyPasskeys: { method: 'GET', path: '/v1/users/me/passkeys', credential: 'session', body: 'none', list: true },
  /** `POST /v1/users/me/passkeys`: Register a passkey for the session's user with the authenticator's response */
  registerPasskey: { method: 'POST', path: '/v1/users/me/passkeys', credential: 'session', body: 'json', list: false },
  /** `DELETE /v1/users/me/passkeys/{id}`: Remove one of the session user's passkeys; it signs no one in any more */
  deleteMyPasskey: { method: 'DELETE', path: '/v1/users/me/passkeys/{id}', credential: 'session', body: 'none', list: false },
  /** `GET /v1/users/{id}/passkeys`: A user's passkeys, newest first */
  listUserPasskeys: { method: 'GET', path: '/v1/users/{id}/passkeys', credential: 'secret', body: 'none', list: true },
  /** `DELETE /v1/users/{id}/passkeys/{passkey_id}`: Remove one of a user's passkeys (a lost device, an operator's reset) */
  deleteUserPasskey: { method: 'DELETE', path: '/v1/users/{id}/passkeys/{passkey_id}', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/auth/passkey/options`: Request options for a passkey sign-in, with their `challenge_id` */
  createPasskeySignInOptions: { method: 'POST', path: '/v1/auth/passkey/options', credential: 'secret', body: 'json', list: false },
  /** `POST /v1/auth/passkey`: Sign in with a passkey: the authenticator's answer to the sign-in options */
  signInWithPasskey: { method: 'POST', path: '/v1/auth/passkey', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/wallet/balance`: The session user's balance and last 20 transactions */
  getCurrentUserBalance: { method: 'GET', path: '/v1/wallet/balance', credential: 'session', body: 'none', list: false },
  /** `GET /v1/webhooks`: List webhook endpoints, newest first */
  listWebhooks: { method: 'GET', path: '/v1/webhooks', credential: 'secret', body: 'none', list: true },
  /** `POST /v1/webhooks`: Create a webhook endpoint; the response carries its secret, shown only here and at rotation */
  createWebhook: { method: 'POST', path: '/v1/webhooks', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/webhooks/{id}`: Retrieve a webhook endpoint */
  getWebhook: { method: 'GET', path: '/v1/webhooks/{id}', credential: 'secret', body: 'none', list: false },
  /** `PATCH /v1/webhooks/{id}`: Change the URL, event types, description, or switch the endpoint off and on */
  updateWebhook: { method: 'PATCH', path: '/v1/webhooks/{id}', credential: 'secret', body: 'json', list: false },
  /** `DELETE /v1/webhooks/{id}`: Delete a webhook endpoint and its delivery log */
  deleteWebhook: { method: 'DELETE', path: '/v1/webhooks/{id}', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/webhooks/{id}/rotate-secret`: A new secret; the old one keeps signing beside it for 24 hours */
  rotateWebhookSecret: { method: 'POST', path: '/v1/webhooks/{id}/rotate-secret', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/webhooks/{id}/test`: Send a webhook.test event to this endpoint alone */
  sendTestWebhook: { method: 'POST', path: '/v1/webhooks/{id}/test', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/webhooks/{id}/recover`: Send again, in event order, every subscribed event since a time that was not delivered to this endpoint */
  recoverWebhook: { method: 'POST', path: '/v1/webhooks/{id}/recover', credential: 'secret', body: 'json', list: false },
  /** `GET /v1/webhooks/{id}/deliveries`: The endpoint's deliveries with their attempts, newest first */
  listWebhookDeliveries: { method: 'GET', path: '/v1/webhooks/{id}/deliveries', credential: 'secret', body: 'none', list: true },
  /** `GET /v1/webhooks/{id}/deliveries/{delivery_id}`: Retrieve a delivery with its attempts */
  getWebhookDelivery: {
    method: 'GET',
    path: '/v1/webhooks/{id}/deliveries/{delivery_id}',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry`: Send a delivery again now, also one that failed; answers with the delivery and the new attempt */
  retryWebhookDelivery: {
    method: 'POST',
    path: '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
    credential: 'secret',
    body: 'none',
    list: false,
  },
  /** `GET /v1/events`: List events, newest first */
  listEvents: { method: 'GET', path: '/v1/events', credential: 'secret', body: 'none', list: true },
  /** `GET /v1/events/{id}`: Retrieve an event */
  getEvent: { method: 'GET', path: '/v1/events/{id}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/event-types`: List the event types the service emits, with a JSON Schema of each one's data */
  listEventTypes: { method: 'GET', path: '/v1/event-types', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/audit-logs`: List audit log entries, newest first */
  listAuditLogs: { method: 'GET', path: '/v1/audit-logs', credential: 'secret', body: 'none', list: true },
  /** `GET /v1/audit-logs/export`: Export audit log entries as JSON lines (application/x-ndjson), oldest first, streamed */
  exportAuditLogs: { method: 'GET', path: '/v1/audit-logs/export', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/audit-logs/{id}`: Retrieve an audit log entry */
  getAuditLog: { method: 'GET', path: '/v1/audit-logs/{id}', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/stats/overview`: Users, wallets, credits in circulation, events today */
  getStatsOverview: { method: 'GET', path: '/v1/stats/overview', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/stats/credits`: Credits added and deducted per UTC day, oldest first */
  getCreditStats: { method: 'GET', path: '/v1/stats/credits', credential: 'secret', body: 'none', list: false },
  /** `GET /v1/stats/webhooks`: Webhook attempts per UTC day: success rate and latency, oldest first */
  getWebhookStats: { method: 'GET', path: '/v1/stats/webhooks', credential: 'secret', body: 'none', list: false },
  /** `POST /v1/auth/sso/saml/{connection_id}/acs`: A SAML connection's AssertionConsumerService (HTTP-POST binding, public) */
  receiveSamlAssertion: { method: 'POST', path: '/v1/auth/sso/saml/{connection_id}/acs', credential: 'public', body: 'form', list: false },
} as const;

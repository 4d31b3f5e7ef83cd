import type { ColumnType, Generated } from 'kysely';

/**
 * Table types, shared by both dialects. Times are ISO 8601 UTC text (sortable, identical on SQLite
 * and PostgreSQL); money and counters are 64-bit integers read back as JavaScript numbers (see
 * `db/database.ts`); JSON documents are text. See docs/adr/0001-one-schema-two-dialects.md.
 */
export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  wallets: WalletsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_refusals: LedgerRefusalsTable;
  wallet_grants: WalletGrantsTable;
  wallet_holds: WalletHoldsTable;
  recurring_grants: RecurringGrantsTable;
  events: EventsTable;
  users: UsersTable;
  roles: RolesTable;
  sessions: SessionsTable;
  email_tokens: EmailTokensTable;
  email_outbox: EmailOutboxTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_workers: WebhookWorkersTable;
  audit_log: AuditLogTable;
  audit_unsealed: AuditUnsealedTable;
  audit_chain: AuditChainTable;
  audit_checkpoints: AuditCheckpointsTable;
  audit_seal_cursor: AuditSealCursorTable;
  audit_ledger_cursor: AuditLedgerCursorTable;
  oauth_providers: OAuthProvidersTable;
  oauth_states: OAuthStatesTable;
  user_identities: UserIdentitiesTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_invitations: OrganizationInvitationsTable;
  organization_domains: OrganizationDomainsTable;
  sso_connections: SsoConnectionsTable;
  sso_domains: SsoDomainsTable;
  sso_requests: SsoRequestsTable;
  sso_assertions: SsoAssertionsTable;
  sso_codes: SsoCodesTable;
  dashboard_sessions: DashboardSessionsTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_tokens: MfaTokensTable;
  session_signing_keys: SessionSigningKeysTable;
  email_code_requests: EmailCodeRequestsTable;
  project_counts: ProjectCountsTable;
  stats_days: StatsDaysTable;
  stats_folds: StatsFoldsTable;
}

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: string;
  /** The relying party for passkeys as JSON `{rp_id, rp_name, origins}`; null until the project sets one. */
  webauthn: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string | null;
  /** SHA-256 (hex) of the whole secret key; the key itself is never stored. */
  key_hash: string;
  /** `svc_sk_` and the first four characters after it, for display. */
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export interface IdempotencyKeysTable {
  project_id: string;
  /** '' for project-wide keys; a wallet id for credits and debits, whose keys are per wallet. */
  scope: string;
  key: string;
  /**
   * SHA-256 of the method, route and canonical body: equal requests have equal hashes. `sealed` for
   * keys claimed by the HTTP hook: their hashes are inside `request_fields`, since a body may hold a
   * password whose plain SHA-256 must not be stored.
   */
  request_hash: string;
  /**
   * JSON object of field name → SHA-256 of that field's value, to name the field that differs. For
   * keys claimed by the HTTP hook, `{hash, fields}` sealed with the associated data
   * `idempotency_request:["<project id>","<scope>","<key>"]`.
   */
  request_fields: string;
  state: 'running' | 'completed';
  /** Random token of the request that holds the key while it runs. */
  lock_id: string | null;
  /** A running key whose lock has passed this time was abandoned (crash) and may be taken over. */
  locked_until: string | null;
  response_status: number | null;
  /**
   * The response for replay. Sealed (lib/secret-box.ts, associated data
   * `idempotency_response:["<project id>","<scope>","<key>"]`) for every key claimed by the HTTP hook
   * (http/idempotency.ts), since a response may carry a credential; in clear for the ledger's own
   * keys, whose answers carry none (docs/adr/0015-secrets-at-rest.md).
   */
  response_body: string | null;
  created_at: string;
  /** Null for keys kept forever (ledger operations). */
  expires_at: string | null;
}

export type WalletStatus = 'active' | 'frozen' | 'closed';

export interface WalletsTable {
  id: string;
  project_id: string;
  /** The owner, `usr_…`. */
  user_id: string;
  /** An ISO 4217 code or a custom unit: `^[A-Z][A-Z0-9_]{1,15}$` (`USD`, `CREDITS`, `GPU_HOURS`). */
  currency: string;
  /**
   * Credits; always the sum of the wallet's ledger entries and Σ grants' `remaining` − `debt`,
   * −`credit_limit` to 2^53 - 1 (a CHECK constraint, migration 0039).
   */
  balance: number;
  /** The sum of the wallet's pending holds, expired or not yet (migration 0023); kept by the ledger's write path. */
  held: number;
  /** How far `balance` and `available` may go below 0, 0 to 2^53 - 1 (migration 0039, docs/adr/0023-credit-limits.md). */
  credit_limit: number;
  /** What the wallet owes: credits taken beyond its grants, repaid first by credits; 0 to `credit_limit`. */
  debt: number;
  status: WalletStatus;
  /** JSON object of string → string. */
  metadata: string;
  low_balance_threshold: number | null;
  created_at: string;
  updated_at: string;
}

export type LedgerTransactionType = 'credit' | 'debit' | 'transfer' | 'expiry' | 'reversal';

/** One movement of credits. Append-only: never updated or deleted (database triggers refuse it). */
export interface LedgerTransactionsTable {
  id: string;
  project_id: string;
  type: LedgerTransactionType;
  currency: string;
  /** Credits moved, 1 to 10^12. */
  amount: number;
  description: string | null;
  /** JSON object of string → string. */
  metadata: string;
  /** The key the request carried, or null. */
  idempotency_key: string | null;
  /**
   * Where the key is unique: the wallet id for credits and debits (keys are per wallet), '' for
   * transfers (per project). With `idempotency_key` it is unique per project, so a key is applied
   * at most once even if the idempotency table were wrong.
   */
  idempotency_scope: string;
  /** The wallet of a credit or debit; null for transfers. */
  wallet_id: string | null;
  /** The two wallets of a transfer; null for credits and debits. */
  from_wallet_id: string | null;
  to_wallet_id: string | null;
  created_at: string;
  /** Who made it: the audit log's actor as stored (`audit.context.ts`); `system` before migration 0021. */
  actor_type: string;
  actor_id: string | null;
  actor_user_id: string | null;
  /** The request that made it; null before migration 0021 and for the service's own movements. */
  request_id: string | null;
  /** The client of that request (the end user a secret key names, `X-End-User-IP`/`X-End-User-Agent`); null before migration 0036 and for the service's own movements. */
  ip: string | null;
  user_agent: string | null;
  /** JSON `[{grant_id, amount, category}]`: the grants drawn on (debits, transfers, expiries) or made (credits); null before migration 0023; `category` since migration 0037. */
  sources: string | null;
  /** A credit's grant: its priority and expiry (null: never); null on other types. */
  priority: number | null;
  expires_at: string | null;
  /** The recurring grant a credit was made for (its period is in `idempotency_key`); null otherwise. */
  recurring_grant_id: string | null;
  /** A credit's category (migration 0037); null on other types and on credits made before it (`default`). */
  category: string | null;
  /** JSON array: the categories a debit or transfer was restricted to; null when it was not. */
  categories: string | null;
  /** What a credit or a received transfer repaid of its wallet's debt first (migration 0039); 0 otherwise. */
  repaid: number;
  /** A reversal's original transaction (migration 0040, docs/adr/0024-reversals.md); null on other types. */
  reverses: string | null;
  /** The amount a reversal was asked for; null when it was asked for all that was left, and on other types. */
  asked_amount: number | null;
}

export type RecurringGrantInterval = 'day' | 'week' | 'month' | 'year';

/**
 * A schedule of credits to one wallet, one per period from `starts_at` on
 * (docs/adr/0022-recurring-grants.md). `next_period` is the first period not yet granted or
 * skipped, `next_grant_at` its start; null once cancelled.
 */
export interface RecurringGrantsTable {
  id: string;
  project_id: string;
  wallet_id: string;
  amount: number;
  interval: RecurringGrantInterval;
  interval_count: number;
  starts_at: string;
  expires: 'never' | 'period_end';
  category: string;
  priority: number;
  description: string | null;
  /** JSON object of string → string. */
  metadata: string;
  status: 'active' | 'cancelled';
  next_period: number;
  next_grant_at: string | null;
  created_at: string;
  cancelled_at: string | null;
}

/**
 * A grant: the credits of one credit or one part of a received transfer, spent by priority, then
 * earliest expiry, then age (docs/adr/0018-holds-and-grants.md). `remaining` includes `held`.
 */
export interface WalletGrantsTable {
  id: string;
  project_id: string;
  wallet_id: string;
  /** The credit or transfer that made it; null for the grants migration 0023 made of older balances. */
  transaction_id: string | null;
  amount: number;
  remaining: number;
  /** The part of `remaining` reserved by pending holds. */
  held: number;
  /** What left the wallet when it expired. */
  expired: number;
  priority: number;
  expires_at: string | null;
  created_at: string;
  /** The credit's category (docs/adr/0021-categories.md); `default` for grants made before migration 0037. */
  category: string;
}

export type HoldStatus = 'pending' | 'captured' | 'voided' | 'expired';

/** A reservation of credits: `available` excludes it until it is captured, voided or expired. */
export interface WalletHoldsTable {
  id: string;
  project_id: string;
  wallet_id: string;
  amount: number;
  captured_amount: number;
  /** Stored `pending` until the write path settles it; past `expires_at` it reads `expired`. */
  status: HoldStatus;
  /** JSON `[{grant_id, amount, category}]`: the grants it reserved (`category` since migration 0037). */
  sources: string;
  /** JSON array: the categories the hold was restricted to; null when it was not. */
  categories: string | null;
  description: string | null;
  /** JSON object of string → string. */
  metadata: string;
  idempotency_key: string | null;
  /** The wallet id: hold keys share the per-wallet namespace of credits and debits. */
  idempotency_scope: string;
  /** The debit its capture made. */
  transaction_id: string | null;
  expires_at: string;
  created_at: string;
  /** When it was made, then when it was captured, voided or expired. */
  updated_at: string;
  /** Who made it, with which request and from where (the audit log's actor and context); `system` before migration 0036. */
  actor_type: string;
  actor_id: string | null;
  actor_user_id: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** The same of what ended it (capture, void, expiry); null while pending. */
  ended_actor_type: string | null;
  ended_actor_id: string | null;
  ended_actor_user_id: string | null;
  ended_request_id: string | null;
  ended_ip: string | null;
  ended_user_agent: string | null;
}

/**
 * A refusal answered to a request that carried a ledger idempotency key: a retry with the key gets
 * the same refusal (docs/adr/0004-idempotency.md). Keys that made a transaction map to it instead
 * (`ledger_transactions.idempotency_key`).
 */
export interface LedgerRefusalsTable {
  project_id: string;
  idempotency_scope: string;
  idempotency_key: string;
  /** SHA-256 of the request's per-field hashes; `request_fields` holds the map, to name a differing field. */
  request_hash: string;
  request_fields: string;
  code: string;
  message: string;
  param: string | null;
  /** The id of the request first answered with the refusal; a replay answers with the same body. */
  request_id: string;
  created_at: string;
}

/**
 * One side of a movement. The entries of a transaction sum to zero. Append-only.
 *
 * `account_id` is a wallet id, or the project's issuance account for the currency
 * (`issuance:USD`), which takes the counter-entry of every credit and debit.
 */
export interface LedgerEntriesTable {
  /** Insertion order; for one wallet it is the order in which its balance changed. */
  seq: Generated<number>;
  project_id: string;
  transaction_id: string;
  account_id: string;
  /** Signed: positive adds to the account, negative takes from it. */
  amount: number;
  /** The wallet's balance after this entry; null on the issuance account, which keeps no running balance. */
  balance_after: number | null;
  created_at: string;
}

/** The outbox: every event, written in the same transaction as the change it reports. */
export interface EventsTable {
  id: string;
  project_id: string;
  type: string;
  /** JSON object, the event's `data`. */
  data: string;
  /** Unique per event; the same on every delivery attempt, so receivers can de-duplicate. */
  idempotency_key: string;
  created_at: string;
  /**
   * Null until the delivery worker has created the event's webhook deliveries (migration
   * 0004_webhooks); writers of events leave it out.
   */
  dispatched_at: string | null;
}

export interface UsersTable {
  id: string;
  project_id: string;
  /** As given, trimmed, with the domain lower-cased: what emails are sent to and users see. */
  email: string;
  /** The whole address lower-cased: unique per project, so emails compare case-insensitively. */
  email_key: string;
  name: string;
  /** argon2id PHC string; null for users without a password (OAuth, SSO). */
  password_hash: string | null;
  email_verified_at: string | null;
  /** JSON array of role keys. */
  roles: string;
  /** JSON object of string → string. */
  metadata: string;
  banned_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Custom roles of a project; the built-in `owner`, `admin` and `member` are not stored. */
export interface RolesTable {
  project_id: string;
  key: string;
  name: string;
  /** JSON array of permission strings. */
  permissions: string;
  created_at: string;
  updated_at: string;
}

export type SessionRevokedReason =
  'logout' | 'revoked' | 'refreshed' | 'refresh_token_reuse' | 'password_reset' | 'user_banned' | 'user_deleted';

/**
 * One session. Neither the session token nor the refresh token is stored: `id` is the token's name
 * (`svc_ses_<ref>`, the part before the dot) and `token_hash` the SHA-256 of the whole token.
 */
export interface SessionsTable {
  /** `svc_ses_<ref>`. */
  id: string;
  project_id: string;
  user_id: string;
  /** SHA-256 (hex) of the whole session token. */
  token_hash: string;
  /** SHA-256 (hex) of the whole refresh token; unique. */
  refresh_token_hash: string;
  refresh_expires_at: string;
  /** The first session of the refresh chain this one descends from (its own id for a fresh log in). */
  chain_id: string;
  /** When its refresh token was used; a refresh token is single use. */
  refreshed_at: string | null;
  /** The session its refresh token was exchanged for. */
  replaced_by: string | null;
  /**
   * Within the refresh grace window only: the successor's session token and refresh token, sealed
   * with the service's SecretBox (bound to this row), so that a retry gets the same session again.
   * Null otherwise; never the tokens in clear. See docs/adr/0009-sessions-and-refresh-chains.md.
   */
  successor_sealed: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_used_at: string;
  revoked_at: string | null;
  revoked_reason: SessionRevokedReason | null;
  /**
   * When the user last proved who they are on this refresh chain: the sign-in, or the latest
   * `POST /v1/users/me/reauthenticate`; a refresh carries it over. Null for sessions from before
   * migration 0031, which count as not recent.
   */
  authenticated_at: string | null;
  /**
   * How the chain signed in, a JSON array of RFC 8176 method names (`["pwd"]`, `["pwd","otp","mfa"]`);
   * a refresh carries it over. Null for sessions from before migration 0034 (an empty list).
   */
  amr: string | null;
}

/** A project's key that signs (or signed) session JWTs (docs/adr/0020-session-jwts.md). */
export interface SessionSigningKeysTable {
  kid: string;
  project_id: string;
  alg: 'ES256' | 'RS256' | 'EdDSA';
  /** The public key as a JWK (JSON), with `kid`, `alg` and `use`. */
  public_jwk: string;
  /** The private key as PKCS #8 PEM, sealed with the service keyring: never in clear. */
  private_key_sealed: string;
  created_at: string;
  /** When it started signing. */
  activated_at: string | null;
  /** When the next key replaced it; it stays published until every JWT it signed has expired. */
  retired_at: string | null;
}

export type EmailTokenPurpose = 'verify_email' | 'password_reset';

/** Single-use tokens sent by email. Only their SHA-256 is stored. */
export interface EmailTokensTable {
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  project_id: string;
  user_id: string;
  purpose: EmailTokenPurpose;
  /** The address the token was sent to; verification verifies this address only. */
  email: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export type EmailStatus = 'pending' | 'sent' | 'failed' | 'cancelled';

/**
 * Emails to send, written in the transaction of the change that asks for them and sent after the
 * commit by the email job. A row holds no secret: a template that needs a token (verification,
 * password reset) creates it when the email is composed, just before it is sent.
 */
export interface EmailOutboxTable {
  /** `eml_…`. */
  id: string;
  project_id: string;
  template: string;
  recipient: string;
  /** JSON object the template reads, e.g. `{user_id}`. */
  data: string;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: string;
  /** A worker that claimed the row holds it until this time; after it, another may take it over. */
  locked_until: string | null;
  /** The last failure, short and without secrets. */
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** A URL that receives the project's events (migration 0004_webhooks). */
export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  /** JSON array of event types, or `["*"]`. */
  events: string;
  description: string | null;
  /** 1 or 0. */
  enabled: number;
  /**
   * Before migration 0014 the `whsec_…` secret in clear; now always '': the service seals what an
   * older version left here into `secret_sealed` at start and empties it (docs/adr/0015-secrets-at-rest.md).
   */
  secret: string;
  /** Like `secret`: before migration 0014 the previous secret in clear; now always null. */
  previous_secret: string | null;
  /**
   * The `whsec_…` secret, sealed (lib/secret-box.ts) with the associated data
   * `webhook_endpoint:<project id>:<endpoint id>`; null only on a row an older version wrote and the
   * start has not sealed yet. Returned in clear only at creation and rotation.
   */
  secret_sealed: string | null;
  /** The secret before the last rotation, sealed like `secret_sealed`; it signs beside the new one until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  /** Why the endpoint is off: `failing` (switched off by the worker) or `manual`; null while enabled (migration 0020). */
  disabled_reason: WebhookDisabledReason | null;
  /** The first failed attempt since the last success; null when the last attempt succeeded. */
  failing_since: string | null;
  /** Deliveries that ended `failed` since `failing_since`. */
  failed_deliveries: number;
  /** At most this many attempts a second; null: no cap. */
  rate_limit_per_second: number | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDisabledReason = 'failing' | 'manual';

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event to one endpoint. Pending rows are the delivery worker's queue. */
export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  /** Every attempt made, scheduled or manual; the next attempt's number is this plus one. */
  attempt_count: number;
  /** Scheduled attempts made: the position in `WEBHOOK_RETRY_SCHEDULE`. */
  scheduled_attempt_count: number;
  /** When the next scheduled attempt is due; null unless pending. */
  next_attempt_at: string | null;
  /** The worker that has claimed the next attempt, until `leased_until`. */
  lease_id: string | null;
  leased_until: string | null;
  last_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A running delivery worker's heartbeat (docs/adr/0006-webhook-delivery.md, "Dead workers"): `id`
 * prefixes every lease it takes; `last_seen` is renewed every second while it runs.
 */
export interface WebhookWorkersTable {
  id: string;
  /** The host name and process id, for operators. */
  host: string;
  pid: number;
  started_at: string;
  last_seen: string;
}

export type WebhookAttemptKind = 'scheduled' | 'manual';

/** One HTTP request of a delivery and what came back. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  /** 1, 2, … within the delivery. */
  attempt_number: number;
  project_id: string;
  kind: WebhookAttemptKind;
  created_at: string;
  /** Null when no HTTP answer came (timeout, refused address, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 4 KiB of the response body, as text. */
  response_body: string | null;
}

/**
 * One audit entry: who (actor), did what (action) to what (resource), from where (request id, IP,
 * user agent), with what outcome. Written in the change's transaction, never updated; see
 * docs/adr/0007-audit-log.md.
 */
export interface AuditLogTable {
  id: string;
  project_id: string;
  created_at: string;
  action: string;
  /** `secret_key`, `session`, `dashboard`, `system` or `anonymous`. */
  actor_type: string;
  /** The key id (`key_…`) or the session's name (`svc_ses_<ref>`, never the token). */
  actor_id: string | null;
  /** A session's user; null for other actors. */
  actor_user_id: string | null;
  resource_type: string;
  resource_id: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** `success` or the error code of the refusal. */
  outcome: string;
  /** A small JSON object of what changed (amounts, balances before and after). */
  changes: string;
}

/**
 * The sealing queue of versions before migration 0013: entries not chained yet, in insertion
 * order. Nothing queues any more; what an older version left is still sealed from it.
 */
export interface AuditUnsealedTable {
  seq: Generated<number>;
  project_id: string;
  entry_id: string;
}

/** A link of a project's hash chain: `hash` = SHA-256 of `prev_hash` and the entry's content. */
export interface AuditChainTable {
  project_id: string;
  seq: number;
  entry_id: string;
  prev_hash: string;
  hash: string;
  sealed_at: string;
}

/**
 * PostgreSQL only (migration 0013): the last entry the sealer chained, in the order of
 * `audit_log.txid` (the writing transaction's id, a column default the write path never names)
 * and then `id`. One row.
 */
export interface AuditSealCursorTable {
  id: number;
  txid: number;
  entry_id: string;
}

/**
 * The last ledger transaction the sealer chained (migration 0025): on PostgreSQL in the order of
 * `ledger_transactions.txid` and then `id`; on SQLite `txid` is its rowid, and `start` the last
 * rowid written before migration 0025 (whose movements have rows of `audit_log`). One row.
 */
export interface AuditLedgerCursorTable {
  id: number;
  start: number;
  txid: number;
  entry_id: string;
}

/** The last link retention removed, per project: verification starts from its hash. */
export interface AuditCheckpointsTable {
  project_id: string;
  seq: number;
  hash: string;
  updated_at: string;
}

/** A project's configuration of one OAuth or OpenID Connect provider (migration 0007). */
export interface OAuthProvidersTable {
  project_id: string;
  /** `google`, `apple`, `github`, or the key of a generic OpenID Connect provider. */
  provider: string;
  kind: 'google' | 'apple' | 'github' | 'oidc';
  client_id: string;
  /** Sealed JSON (lib/secret-box.ts): `{client_secret}`, or Apple's `{private_key}`. */
  secret_sealed: string;
  /** Generic OpenID Connect providers only; discovered from `/.well-known/openid-configuration`. */
  issuer: string | null;
  apple_team_id: string | null;
  apple_key_id: string | null;
  /** JSON array of scope names. */
  scopes: string;
  /** JSON array of the allowed redirect URIs, compared exactly. */
  redirect_uris: string;
  created_at: string;
  updated_at: string;
}

/** A sign-in in flight: single use, 10 minutes. */
export interface OAuthStatesTable {
  /** SHA-256 (hex) of the `state` sent to the provider; the state itself is not stored. */
  state_hash: string;
  project_id: string;
  provider: string;
  redirect_uri: string;
  /** The PKCE verifier, sealed. */
  code_verifier_sealed: string;
  /** OpenID Connect only: the ID token must carry it back. */
  nonce: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A provider's account (provider, subject) linked to a user; no provider token is kept. */
export interface UserIdentitiesTable {
  project_id: string;
  provider: string;
  subject: string;
  user_id: string;
  /** The email the provider gave at the last sign-in, for display. */
  email: string | null;
  created_at: string;
  last_used_at: string;
}

/** An organization of a project's users (migration 0008). The slug is unique per project. */
export interface OrganizationsTable {
  /** `org_…`. */
  id: string;
  project_id: string;
  name: string;
  slug: string;
  /** JSON object of string → string. */
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A user's membership of an organization, with the key of one of the project's roles. */
export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  project_id: string;
  role: string;
  created_at: string;
  updated_at: string;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'replaced';

/** An invitation by email to join an organization with a role; single use, 7 days. */
export interface OrganizationInvitationsTable {
  /** `inv_…`. */
  id: string;
  project_id: string;
  organization_id: string;
  /** As given, trimmed, with the domain lower-cased. */
  email: string;
  /** The whole address lower-cased: what the accepting user's verified email is compared with. */
  email_key: string;
  role: string;
  status: InvitationStatus;
  /** SHA-256 (hex) of the token in the email; null until the email is composed. */
  token_hash: string | null;
  expires_at: string;
  accepted_at: string | null;
  accepted_user_id: string | null;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * An email domain an organization claims (migration 0032): verified by a TXT record (`dns`) or by
 * the operator's word (`manual`). Verified for one organization of a project at most.
 */
export interface OrganizationDomainsTable {
  project_id: string;
  organization_id: string;
  /** Lower case, ASCII (punycode), no trailing dot. */
  domain: string;
  verification: 'dns' | 'manual';
  status: 'pending' | 'verified';
  /** What the TXT record at `_svc-verification.<domain>` must hold; random per organization and domain. */
  txt_value: string;
  created_at: string;
  verified_at: string | null;
}

/** A signed-in operator dashboard (docs/adr/0012-dashboard.md); the cookie token only as its hash. */
export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the cookie token. */
  token_hash: string;
  project_id: string;
  /** The secret key (`key_…`) the operator signed in with; never the key itself. */
  key_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  expires_at: string;
  /** Set by sign out. */
  ended_at: string | null;
}

/** An organization's enterprise SSO connection (migration 0009, docs/adr/0011-sso.md). */
export interface SsoConnectionsTable {
  id: string;
  project_id: string;
  organization_id: string;
  type: 'oidc' | 'saml';
  /** The role given to members created at their first sign-in. */
  default_role: string;
  /** 1 when the SAML identity provider may start sign-ins (IdP-initiated); 0 otherwise. */
  allow_idp_initiated: number;
  /** JSON array: where a sign-in may send the browser back. */
  redirect_uris: string;
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  /** The OIDC client secret, sealed (lib/secret-box.ts). */
  oidc_client_secret_sealed: string | null;
  saml_idp_entity_id: string | null;
  saml_idp_sso_url: string | null;
  /** PEM of the one certificate whose key may sign this identity provider's responses. */
  saml_idp_certificate: string | null;
  created_at: string;
}

/** An email domain of a connection; a domain belongs to at most one connection of a project. */
export interface SsoDomainsTable {
  project_id: string;
  /** Lower case. */
  domain: string;
  connection_id: string;
}

/** An SSO sign-in in flight: an OIDC state (as SHA-256) or a SAML AuthnRequest id; single use. */
export interface SsoRequestsTable {
  request_key: string;
  project_id: string;
  connection_id: string;
  redirect_uri: string;
  /** The caller's own `state`, handed back on the redirect. */
  client_state: string | null;
  /** OIDC: the PKCE verifier, sealed. */
  code_verifier_sealed: string | null;
  /** OIDC: the nonce the ID token must carry. */
  nonce: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A SAML assertion id already accepted, kept until the assertion's own expiry (replay defence). */
export interface SsoAssertionsTable {
  connection_id: string;
  assertion_id: string;
  expires_at: string;
}

/** The service's one-time code after an SSO sign-in, as SHA-256, with the asserted identity. */
export interface SsoCodesTable {
  code_hash: string;
  project_id: string;
  connection_id: string;
  /** The identity provider's stable id of the account (OIDC `sub`, SAML NameID). */
  subject: string;
  email: string;
  name: string;
  /** 1 when the identity provider vouched for `email` (docs/adr/0014-identity-linking.md), else 0. */
  email_verified: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export type PasskeyChallengePurpose = 'registration' | 'authentication';

export interface PasskeysTable {
  /** `pk_…`. */
  id: string;
  project_id: string;
  user_id: string;
  /** The authenticator's credential id, base64url; unique within the project. Not a secret. */
  credential_id: string;
  /** The credential's COSE public key, base64url. Not a secret. */
  public_key: string;
  /** The authenticator's signature counter at the last accepted ceremony (0 when it keeps none). */
  sign_count: number;
  /** JSON array of the transports the authenticator reported (`internal`, `usb`, `hybrid`, …). */
  transports: string;
  /** `singleDevice` or `multiDevice` (a synced passkey). */
  device_type: string;
  /** 1 when the credential is backed up (synced), else 0. */
  backed_up: number;
  /** The authenticator model's AAGUID; all zeros under attestation `none` for most authenticators. */
  aaguid: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface PasskeyChallengesTable {
  /** `pkc_…`: the `challenge_id` of a sign-in; registrations find theirs by hash. */
  id: string;
  project_id: string;
  purpose: PasskeyChallengePurpose;
  /** Registration: the session's user. Sign-in with an email: that address's user, when it exists. */
  user_id: string | null;
  /** 1 when only `user_id`'s passkey may answer (none at all when it is null); 0 for a discoverable sign-in. */
  user_bound: number;
  /** SHA-256 (hex) of the challenge; the challenge itself is never stored. */
  challenge_hash: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** Users and wallets per project, kept by triggers on every insert and delete (migration 0022). */
export interface ProjectCountsTable {
  project_id: string;
  users: number;
  wallets: number;
}

/** What `stats_days` sums per day: a ledger transaction type, `event` or `webhook_attempt`. */
/** A ledger transaction's type (a reversal's: `reversal_` and the type it reverses), an event, or a webhook attempt. */
export type StatsSource =
  Exclude<LedgerTransactionType, 'reversal'> | 'reversal_credit' | 'reversal_debit' | 'reversal_transfer' | 'event' | 'webhook_attempt';

/**
 * Per-day counts and sums folded from ledger transactions, events and webhook attempts by the stats
 * job (modules/stats/stats.fold.ts). An amount sum is `amount_hi * 2^26 + amount_lo`.
 */
export interface StatsDaysTable {
  project_id: string;
  source: StatsSource;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  n: number;
  amount_hi: number;
  amount_lo: number;
  /** Webhook attempts answered 2xx. */
  succeeded: number;
  latency_sum: number;
  latency_max: number;
}

/** Which table a fold reads. */
export type StatsFoldSource = 'ledger' | 'events' | 'webhook_attempts';

/** The watermark of each fold: rows created before `folded_until` are in `stats_days`. */
export interface StatsFoldsTable {
  project_id: string;
  source: StatsFoldSource;
  folded_until: string;
}

export type MfaTotpStatus = 'pending' | 'active';

/** A user's authenticator app (migration 0018_mfa). The secret is sealed, never stored in clear. */
export interface MfaTotpTable {
  project_id: string;
  user_id: string;
  /** The base32 secret, sealed with the service's SecretBox, bound to (project, user). */
  secret_sealed: string;
  /** `pending` from enrolment until a first code confirms it; then `active`. */
  status: MfaTotpStatus;
  /** The last 30-second time step whose code was accepted; a code of it or an earlier one is refused. */
  last_used_step: number | null;
  created_at: string;
  activated_at: string | null;
}

/** Single-use recovery codes, as SHA-256 (hex) of the normalized code. */
export interface MfaRecoveryCodesTable {
  project_id: string;
  user_id: string;
  code_hash: string;
  used_at: string | null;
  created_at: string;
}

/** A sign-in waiting for its second factor: SHA-256 (hex) of the whole `svc_mfa_…` token. */
export interface MfaTokensTable {
  token_hash: string;
  project_id: string;
  user_id: string;
  /** Codes tried with it; the fifth wrong one ends it. */
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
  /** The first factor's methods (JSON array), which the session's `amr` starts with. */
  amr: string | null;
}

/**
 * One sign-in code asked for an address (up to 3 live at once); the code itself only as a salted
 * SHA-256. Supersedes `email_codes` (one row per address), which migration 0031 emptied.
 */
export interface EmailCodeRequestsTable {
  project_id: string;
  /** Random; names the request, salts the hash, and ties the queued email to this row. */
  request_ref: string;
  /** The lower-cased address, as `users.email_key`. */
  email_key: string;
  email: string;
  /** Null until the email is composed, when the code is made. */
  code_hash: string | null;
  /** 1 when the request asked to create the user if none has the address. */
  create_user: number;
  /** Wrong codes tried while this one was live; the fifth ends it. */
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

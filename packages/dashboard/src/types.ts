/** The shapes of the /v1 objects the page shows (docs/api.md section 4), as far as it reads them. */

export interface User {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  roles: string[];
  metadata: Record<string, string>;
  banned: boolean;
  created_at: string;
  updated_at: string;
  identities?: Identity[];
}

/** `GET /v1/users/{id}/mfa`: a user's second factors, never a secret. */
export interface MfaStatus {
  user_id: string;
  totp: { status: 'none' | 'pending' | 'active'; activated_at: string | null };
  recovery_codes_left: number;
  methods: string[];
}

export interface Identity {
  provider: string;
  subject: string;
  email: string | null;
  created_at: string;
  last_used_at: string;
}

export interface SessionInfo {
  id: string;
  user_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface Passkey {
  id: string;
  user_id: string;
  name: string;
  device_type: 'single_device' | 'multi_device';
  backed_up: boolean;
  transports: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface Wallet {
  id: string;
  user_id: string;
  currency: string;
  balance: number;
  /** The balance less pending holds: what debits, transfers and holds may take, down to −`credit_limit`. */
  available: number;
  /** How far `balance` and `available` may go below 0 (docs/adr/0023-credit-limits.md). */
  credit_limit: number;
  /** What the wallet owes: credits taken beyond its grants, repaid first by the next credits. */
  debt: number;
  status: 'active' | 'frozen' | 'closed';
  metadata: Record<string, string>;
  low_balance_threshold: number | null;
  created_at: string;
}

export interface Transaction {
  id: string;
  type: 'credit' | 'debit' | 'expiry' | 'reversal' | 'transfer_in' | 'transfer_out';
  amount: number;
  balance_after: number | null;
  description: string | null;
  counterparty_wallet_id?: string;
  /** Reversals only: the transaction reversed. */
  reverses?: string;
  /** What a credit or received transfer repaid of the wallet's debt; 0 otherwise. */
  repaid: number;
  created_at: string;
}

export interface Hold {
  id: string;
  wallet_id: string;
  amount: number;
  captured_amount: number;
  status: 'pending' | 'captured' | 'voided' | 'expired';
  description: string | null;
  transaction_id: string | null;
  expires_at: string;
  created_at: string;
}

export interface RecurringGrant {
  id: string;
  wallet_id: string;
  amount: number;
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
  starts_at: string;
  expires: 'never' | 'period_end';
  category: string;
  priority: number;
  description: string | null;
  status: 'active' | 'cancelled';
  next_grant_at: string | null;
  created_at: string;
  cancelled_at: string | null;
}

export interface Grant {
  id: string;
  wallet_id: string;
  amount: number;
  remaining: number;
  priority: number;
  expires_at: string | null;
  status: 'active' | 'depleted' | 'expired';
  created_at: string;
  /** The category of the credit that made it (`default` unless the credit named one). */
  category: string;
}

/** `GET /v1/wallets/{id}/balance`: the credits, what is available, and the credits by category. */
export interface Balance {
  credits: number;
  currency: string;
  available: number;
  categories: { category: string; remaining: number }[];
}

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Why it is off: `failing` (switched off after days of failures) or `manual`; null while enabled. */
  disabled_reason: 'failing' | 'manual' | null;
  rate_limit_per_second: number | null;
  created_at: string;
  secret?: string;
}

export interface EventTypeEntry {
  type: string;
  description: string;
  schema: unknown;
}

export interface Recovery {
  object: 'recovery';
  deliveries: number;
}

export interface Attempt {
  attempt: number;
  kind: 'scheduled' | 'manual';
  created_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Attempt[];
}

export interface ServiceEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  idempotency_key: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
  secret_key?: string;
}

export interface Provider {
  provider: string;
  kind: string;
  client_id: string;
  issuer: string | null;
  scopes: string[];
  redirect_uris: string[];
  updated_at: string;
}

export interface Organization {
  id: string;
  name: string;
  slug: string;
  created_at: string;
}

export interface Member {
  user_id: string;
  role: string;
  created_at: string;
  user?: { email?: string; name?: string };
  email?: string;
}

/** An organization's email domain; once verified, its SSO connection answers for it. */
export interface OrganizationDomain {
  domain: string;
  status: 'pending' | 'verified';
  verification: 'dns' | 'manual';
  txt_record: { name: string; value: string };
  created_at: string;
  verified_at: string | null;
}

/** A key that signs the project's session JWTs: its public half is in the JWKS; its private half never leaves the service. */
export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'RS256' | 'EdDSA';
  status: 'signing' | 'next' | 'retiring';
  created_at: string;
  activated_at: string | null;
  retired_at: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  expires_at: string;
  created_at: string;
}

export interface AuditEntry {
  id: string;
  created_at: string;
  action: string;
  actor: { type: string; id?: string; key_id?: string; user_id?: string };
  resource: { type: string; id: string | null };
  outcome: string;
  changes?: unknown;
  ip?: string | null;
  request_id?: string | null;
}

export const EVENT_TYPES = [
  'wallet.credit.added',
  'wallet.credit.deducted',
  'wallet.transfer.sent',
  'wallet.transfer.received',
  'wallet.balance.low',
  'user.created',
  'user.updated',
  'user.deleted',
  'user.email_verified',
  'session.created',
  'session.revoked',
  'organization.created',
  'organization.member.added',
  'organization.member.removed',
  'organization.invitation.accepted',
  'webhook_endpoint.disabled',
  'webhook.test',
] as const;

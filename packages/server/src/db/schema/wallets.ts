import type { Generated } from 'kysely';

/** The wallets module's tables (modules/wallets): wallets, the ledger, grants, holds and recurring grants. */
export interface WalletsDatabase {
  wallets: WalletsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_refusals: LedgerRefusalsTable;
  wallet_grants: WalletGrantsTable;
  wallet_holds: WalletHoldsTable;
  recurring_grants: RecurringGrantsTable;
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

import type { LedgerTransactionType } from './wallets.js';

/** The stats module's tables (modules/stats): the counts and per-day sums the statistics read. */
export interface StatsDatabase {
  project_counts: ProjectCountsTable;
  stats_days: StatsDaysTable;
  stats_folds: StatsFoldsTable;
}

/** Users and wallets per project, kept by triggers on every insert and delete (migration 0022); read by the statistics. */
export interface ProjectCountsTable {
  project_id: string;
  users: number;
  wallets: number;
}

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

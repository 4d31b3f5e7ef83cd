import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { ISSUANCE_ACCOUNT_PREFIX } from './ledger.store.js';

/**
 * The ledger's invariants (docs/api.md section 4, Wallets; holds and grants in
 * docs/adr/0018-holds-and-grants.md; recurring grants in docs/adr/0022-recurring-grants.md; credit limits in
 * docs/adr/0023-credit-limits.md; reversals in docs/adr/0024-reversals.md), checked against what is stored. Each
 * check is one SQL statement that returns the offending rows (at most `EXAMPLES_MAX` of them, plus
 * their count), so a sound ledger returns nothing; comparisons stay in SQL, where sums above 2^53
 * are exact. Used by `svc ledger verify` and by the ledger's property tests.
 */

export const LEDGER_CHECKS = [
  'balances_not_sum_of_entries',
  'running_balances_wrong',
  'transactions_not_summing_to_zero',
  'transactions_with_fewer_than_two_entries',
  'entries_outside_their_unit',
  'balances_below_credit_limit',
  'idempotency_keys_applied_twice',
  'money_events_missing_or_extra',
  'grants_not_summing_to_balance',
  'held_not_sum_of_pending_holds',
  'available_below_credit_limit',
  'debt_over_credit_limit',
  'recurring_grant_periods_not_once',
  'grants_not_of_their_credit_category',
  'reversals_exceeding_original',
  'reversals_not_of_a_reversible_transaction',
] as const;

export type LedgerCheck = (typeof LEDGER_CHECKS)[number];

export interface LedgerCheckResult {
  /** How many rows break the invariant. */
  readonly violations: number;
  /** Ids of the first offending rows (wallets, transactions, or `scope/key` for idempotency keys). */
  readonly examples: readonly string[];
}

export interface LedgerVerification {
  readonly sound: boolean;
  /** Null: every project. */
  readonly projectId: string | null;
  readonly checks: Readonly<Record<LedgerCheck, LedgerCheckResult>>;
}

const EXAMPLES_MAX = 10;

/** The statement of one check: one column `id` per offending row. */
function checkStatement(check: LedgerCheck, projectId: string | null): RawBuilder<{ id: string }> {
  // Every subquery is scoped by project when one is given; `true` otherwise.
  const scoped = (alias: string) => (projectId === null ? sql`true` : sql`${sql.ref(`${alias}.project_id`)} = ${projectId}`);
  switch (check) {
    case 'balances_not_sum_of_entries':
      return sql`select w.id as id from wallets w
        left join (select project_id, account_id, sum(amount) as total from ledger_entries e where ${scoped('e')}
                   group by project_id, account_id) s
          on s.project_id = w.project_id and s.account_id = w.id
        where ${scoped('w')} and w.balance <> coalesce(s.total, 0)`;
    case 'running_balances_wrong':
      return sql`select r.transaction_id as id from (
          select e.transaction_id, e.balance_after,
                 sum(e.amount) over (partition by e.project_id, e.account_id order by e.seq rows unbounded preceding) as running
          from ledger_entries e where ${scoped('e')} and e.balance_after is not null) r
        where r.running <> r.balance_after`;
    case 'transactions_not_summing_to_zero':
      return sql`select e.transaction_id as id from ledger_entries e where ${scoped('e')}
        group by e.transaction_id having sum(e.amount) <> 0`;
    case 'transactions_with_fewer_than_two_entries':
      return sql`select t.id as id from ledger_transactions t
        where ${scoped('t')} and (select count(*) from ledger_entries e where e.transaction_id = t.id) < 2`;
    case 'entries_outside_their_unit':
      // Units never mix (docs/api.md, "Units"): every entry of a transaction is on a wallet of the
      // transaction's currency or on that currency's issuance account, so each unit's entries sum
      // to zero on their own.
      return sql`select e.transaction_id as id from ledger_entries e
        join ledger_transactions t on t.id = e.transaction_id
        left join wallets w on w.project_id = e.project_id and w.id = e.account_id
        where ${scoped('e')} and case when w.id is null then e.account_id <> ${ISSUANCE_ACCOUNT_PREFIX} || t.currency
                                      else w.currency <> t.currency end`;
    case 'balances_below_credit_limit':
      return sql`select w.id as id from wallets w where ${scoped('w')} and w.balance < -w.credit_limit`;
    case 'idempotency_keys_applied_twice':
      return sql`select t.idempotency_scope || '/' || t.idempotency_key as id from ledger_transactions t
        where ${scoped('t')} and t.idempotency_key is not null
        group by t.project_id, t.idempotency_scope, t.idempotency_key having count(*) > 1`;
    case 'money_events_missing_or_extra':
      // One event per credit, debit, expiry or reversal and two per transfer, in the same project (wallet.balance.low aside).
      return sql`select p.project_id as id from (
          select t.project_id, sum(case when t.type = 'transfer' then 2 else 1 end) as expected, 0 as actual
          from ledger_transactions t where ${scoped('t')} group by t.project_id
          union all
          select v.project_id, 0 as expected, count(*) as actual from events v
          where ${scoped('v')} and v.type in ('wallet.credit.added', 'wallet.credit.deducted', 'wallet.transfer.sent',
                                               'wallet.transfer.received', 'wallet.credit.expired', 'wallet.transaction.reversed')
          group by v.project_id) p
        group by p.project_id having sum(p.expected) <> sum(p.actual)`;
    case 'grants_not_summing_to_balance':
      // Every credit is a grant (docs/adr/0018-holds-and-grants.md), less what the wallet owes
      // (docs/adr/0023-credit-limits.md): balance = Σ grants' remaining − debt.
      return sql`select w.id as id from wallets w
        left join (select project_id, wallet_id, sum(remaining) as total from wallet_grants g where ${scoped('g')}
                   group by project_id, wallet_id) s
          on s.project_id = w.project_id and s.wallet_id = w.id
        where ${scoped('w')} and w.balance <> coalesce(s.total, 0) - w.debt`;
    case 'held_not_sum_of_pending_holds':
      return sql`select w.id as id from wallets w
        left join (select project_id, wallet_id, sum(amount) as total from wallet_holds h where ${scoped('h')} and h.status = 'pending'
                   group by project_id, wallet_id) s
          on s.project_id = w.project_id and s.wallet_id = w.id
        where ${scoped('w')} and w.held <> coalesce(s.total, 0)`;
    case 'available_below_credit_limit':
      // available = balance − held never goes below −credit_limit; nor does a grant hold more than it has left.
      return sql`select w.id as id from wallets w where ${scoped('w')} and w.balance - w.held < -w.credit_limit
        union all
        select g.id as id from wallet_grants g where ${scoped('g')} and (g.held > g.remaining or g.remaining < 0)`;
    case 'debt_over_credit_limit':
      return sql`select w.id as id from wallets w where ${scoped('w')} and (w.debt < 0 or w.debt > w.credit_limit)`;
    case 'recurring_grant_periods_not_once':
      // One credit per (recurring grant, period), under the period's key `<recurring grant id>:<index>`
      // in the grant's wallet (docs/adr/0022-recurring-grants.md): a credit of a recurring grant
      // without that key, or of another wallet, or a period credited twice.
      return sql`select t.id as id from ledger_transactions t
          left join recurring_grants r on r.project_id = t.project_id and r.id = t.recurring_grant_id
        where ${scoped('t')} and t.recurring_grant_id is not null
          and (t.type <> 'credit' or r.id is null or r.wallet_id <> t.wallet_id or t.idempotency_key is null
               or substr(t.idempotency_key, 1, length(t.recurring_grant_id) + 1) <> t.recurring_grant_id || ':')
        union all
        select min(t.id) as id from ledger_transactions t where ${scoped('t')} and t.recurring_grant_id is not null
        group by t.project_id, t.recurring_grant_id, t.idempotency_key having count(*) > 1`;
    case 'grants_not_of_their_credit_category':
      // A credit's grant keeps the credit's category (docs/adr/0021-categories.md); credits made
      // before categories existed are `default`, as their grants are.
      return sql`select g.id as id from wallet_grants g
        join ledger_transactions t on t.id = g.transaction_id and t.type = 'credit'
        where ${scoped('g')} and g.category <> coalesce(t.category, 'default')`;
    case 'reversals_exceeding_original':
      // The reversals of a transaction give back at most what it moved.
      return sql`select o.id as id from ledger_transactions o
        join (select project_id, reverses, sum(amount) as total from ledger_transactions r
              where ${scoped('r')} and r.reverses is not null group by project_id, reverses) s
          on s.project_id = o.project_id and s.reverses = o.id
        where ${scoped('o')} and s.total > o.amount`;
    case 'reversals_not_of_a_reversible_transaction':
      // A reversal names a credit, debit or transfer of its project, in its unit and on its wallets:
      // the credit's or debit's wallet, or the transfer's two wallets the other way round. Only
      // reversals name one.
      return sql`select r.id as id from ledger_transactions r
          left join ledger_transactions o on o.project_id = r.project_id and o.id = r.reverses
        where ${scoped('r')} and (r.type = 'reversal') <> (r.reverses is not null)
           or ${scoped('r')} and r.type = 'reversal' and (
                o.id is null or o.type not in ('credit', 'debit', 'transfer') or o.currency <> r.currency
                or (o.type = 'transfer' and (r.wallet_id <> o.from_wallet_id or r.from_wallet_id is null
                                             or r.from_wallet_id <> o.to_wallet_id))
                or (o.type <> 'transfer' and (r.wallet_id <> o.wallet_id or r.from_wallet_id is not null)))`;
  }
}

/** Runs every check, for one project or (null) for the whole database. */
export async function verifyLedger(db: Db, options: { projectId: string | null }): Promise<LedgerVerification> {
  const checks = {} as Record<LedgerCheck, LedgerCheckResult>;
  for (const check of LEDGER_CHECKS) {
    const statement = checkStatement(check, options.projectId);
    const counted = await sql<{ n: number | string | bigint }>`select count(*) as n from (${statement}) c`.execute(db.kysely);
    const violations = Number(counted.rows[0]?.n ?? 0);
    const examples =
      violations === 0
        ? []
        : (
            await sql<{ id: string }>`select c.id as id from (${statement}) c order by c.id limit ${EXAMPLES_MAX}`.execute(db.kysely)
          ).rows.map((row) => row.id);
    checks[check] = { violations, examples };
  }
  const sound = LEDGER_CHECKS.every((check) => checks[check].violations === 0);
  return { sound, projectId: options.projectId, checks };
}

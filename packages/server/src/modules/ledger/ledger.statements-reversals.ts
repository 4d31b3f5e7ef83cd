import { selectByKeys } from '../../db/list-statements.js';
import type { Transaction as DbTransaction } from '../../db/transaction.js';
import type { LedgerTransactionRow } from './ledger.store.js';

/** The write path's statements for reversals (docs/adr/0024-reversals.md), the same on both dialects. */

export interface TransactionRef {
  readonly projectId: string;
  readonly transactionId: string;
}

/**
 * The transactions named (missing ones are left out). Read before the flush locks its wallets, to
 * know which to lock: a transaction never changes once written. One `(project_id, id) in (…)`
 * statement, which SQLite answers from the primary key; `project_id = ? and id in (…)` with a
 * long list made it choose `ledger_transactions_project_created_idx` and read every transaction
 * of the project.
 */
export async function findReversible(trx: DbTransaction, refs: readonly TransactionRef[]): Promise<LedgerTransactionRow[]> {
  const keys = new Map<string, readonly [string, string]>();
  for (const ref of refs) keys.set(`${ref.projectId} ${ref.transactionId}`, [ref.projectId, ref.transactionId]);
  return selectByKeys(trx.selectFrom('ledger_transactions').selectAll(), ['project_id', 'id'], [...keys.values()]);
}

/**
 * What the reversals committed so far gave back of each named transaction (0 when none), read once
 * the flush holds the locks of the transactions' wallets: every reversal of a transaction locks
 * them too, so none commits between this read and the flush's commit
 * (index `ledger_transactions_reverses_idx`, migration 0040).
 */
export async function reversedAmounts(trx: DbTransaction, refs: readonly TransactionRef[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  for (const [projectId, ids] of byProject(refs)) {
    const rows = await trx
      .selectFrom('ledger_transactions')
      .select('reverses')
      .select((eb) => eb.fn.sum<number | string>('amount').as('total'))
      // Says what the partial index says, so SQLite reads the reversals through it.
      .where('reverses', 'is not', null)
      .where('project_id', '=', projectId)
      .where('reverses', 'in', ids)
      .groupBy('reverses')
      .execute();
    for (const row of rows) if (row.reverses !== null) sums.set(`${projectId} ${row.reverses}`, Number(row.total));
  }
  return sums;
}

/**
 * The transaction ids by project: one `project_id = ? and … in (…)` statement each (nearly always
 * one), which both dialects answer from the primary key and `ledger_transactions_reverses_idx`.
 */
function byProject(refs: readonly TransactionRef[]): Map<string, string[]> {
  const ids = new Map<string, string[]>();
  for (const ref of refs) {
    const list = ids.get(ref.projectId);
    if (list === undefined) ids.set(ref.projectId, [ref.transactionId]);
    else if (!list.includes(ref.transactionId)) list.push(ref.transactionId);
  }
  return ids;
}

import type { Transaction as DbTransaction } from '../../db/transaction.js';
import type { LedgerTransactionRow } from './ledger.store.js';

/** The write path's statements for reversals (docs/adr/0024-reversals.md), the same on both dialects. */

export interface TransactionRef {
  readonly projectId: string;
  readonly transactionId: string;
}

/**
 * The transactions named (missing ones are left out). Read before the flush locks its wallets, to
 * know which to lock: a transaction never changes once written.
 */
export async function findReversible(trx: DbTransaction, refs: readonly TransactionRef[]): Promise<LedgerTransactionRow[]> {
  if (refs.length === 0) return [];
  return trx
    .selectFrom('ledger_transactions')
    .selectAll()
    .where((eb) =>
      eb(
        eb.refTuple('project_id', 'id'),
        'in',
        refs.map((ref) => eb.tuple(ref.projectId, ref.transactionId)),
      ),
    )
    .execute();
}

/**
 * What the reversals committed so far gave back of each named transaction (0 when none), read once
 * the flush holds the locks of the transactions' wallets: every reversal of a transaction locks
 * them too, so none commits between this read and the flush's commit
 * (index `ledger_transactions_reverses_idx`, migration 0040).
 */
export async function reversedAmounts(trx: DbTransaction, refs: readonly TransactionRef[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  if (refs.length === 0) return sums;
  const rows = await trx
    .selectFrom('ledger_transactions')
    .select(['project_id', 'reverses'])
    .select((eb) => eb.fn.sum<number | string>('amount').as('total'))
    .where('reverses', 'is not', null)
    .where((eb) =>
      eb(
        eb.refTuple('project_id', 'reverses'),
        'in',
        refs.map((ref) => eb.tuple(ref.projectId, ref.transactionId)),
      ),
    )
    .groupBy(['project_id', 'reverses'])
    .execute();
  for (const row of rows) if (row.reverses !== null) sums.set(`${row.project_id} ${row.reverses}`, Number(row.total));
  return sums;
}

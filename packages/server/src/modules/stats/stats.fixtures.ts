import type { Kysely } from 'kysely';
import type { Database, LedgerTransactionType } from '../../db/schema.js';

let sequence = 0;

/** A wallet row as a test inserts it directly (its balance is not what the statistics read). */
export function walletRow(id: string, projectId: string, createdAt: string): Database['wallets'] {
  return {
    id,
    project_id: projectId,
    user_id: `usr_${id}`,
    currency: 'USD',
    balance: 0,
    held: 0,
    credit_limit: 0,
    debt: 0,
    status: 'active',
    metadata: '{}',
    low_balance_threshold: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

/** Ledger transactions of the given amounts created at `createdAt`, inserted directly, 1,000 a statement. */
export async function insertTransactions(
  db: Kysely<Database>,
  projectId: string,
  type: LedgerTransactionType,
  amounts: readonly number[],
  createdAt: string,
): Promise<void> {
  const rows = amounts.map((amount) => {
    sequence += 1;
    return {
      id: `txn_stats_${sequence}_${Math.random().toString(36).slice(2, 8)}`,
      project_id: projectId,
      type,
      currency: 'USD',
      amount,
      description: null,
      metadata: '{}',
      idempotency_key: null,
      idempotency_scope: '',
      wallet_id: 'wal_a',
      from_wallet_id: null,
      to_wallet_id: null,
      created_at: createdAt,
      actor_type: 'system',
      actor_id: null,
      actor_user_id: null,
      request_id: null,
      repaid: 0,
    };
  });
  for (let start = 0; start < rows.length; start += 1000) {
    await db
      .insertInto('ledger_transactions')
      .values(rows.slice(start, start + 1000))
      .execute();
  }
}

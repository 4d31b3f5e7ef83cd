import { join } from 'node:path';
import pg from 'pg';
import { SqliteDriver } from '../../packages/server/dist/db/sqlite-driver.js';
import { assertLoopback } from './processes.js';

/**
 * The ledger's invariants, read from the database after a run (the service stopped). Each query
 * counts violations, so a sound ledger gives 0 everywhere; `entries_total` is the sum of every
 * entry, also 0 in a sound ledger. The same SQL runs on both dialects.
 */
const CHECKS = {
  // A wallet's balance column equals the sum of its entries.
  balances_not_sum_of_entries: `
    select count(*) as n from wallets w
    left join (select project_id, account_id, sum(amount) as total from ledger_entries group by project_id, account_id) e
      on e.project_id = w.project_id and e.account_id = w.id
    where w.balance <> coalesce(e.total, 0)`,
  transactions_not_summing_to_zero: `
    select count(*) as n from (select transaction_id from ledger_entries group by transaction_id having sum(amount) <> 0) t`,
  transactions_with_fewer_than_two_entries: `
    select count(*) as n from ledger_transactions t
    where (select count(*) from ledger_entries e where e.transaction_id = t.id) < 2`,
  negative_balances: `select count(*) as n from wallets where balance < 0`,
  idempotency_keys_applied_twice: `
    select count(*) as n from (
      select project_id, idempotency_scope, idempotency_key from ledger_transactions
      where idempotency_key is not null group by project_id, idempotency_scope, idempotency_key having count(*) > 1
    ) k`,
  // The outbox: one event per credit, debit or reversal, two per transfer (balance.low events aside).
  outbox_events_missing_or_extra: `
    select abs((select count(*) from events where type in ('wallet.credit.added', 'wallet.credit.deducted', 'wallet.transfer.sent', 'wallet.transfer.received',
                                                     'wallet.transaction.reversed'))
      - (select count(*) + sum(case when type = 'transfer' then 1 else 0 end) from ledger_transactions)) as n`,
};

const TOTALS = {
  entries_total: 'select coalesce(sum(amount), 0) as n from ledger_entries',
  transactions: 'select count(*) as n from ledger_transactions',
  entries: 'select count(*) as n from ledger_entries',
  wallets: 'select count(*) as n from wallets',
};

/** `{ checks: {name: violations}, totals, sound }` for the database `database` (bench/lib/service.js). */
export async function checkLedgerInvariants(database) {
  const queries = { ...CHECKS, ...TOTALS };
  const values =
    database.dialect === 'sqlite'
      ? readSqlite(join(database.dataDir, 'svc.sqlite'), queries)
      : await readPostgres(database.env['DATABASE_URL'], queries);
  const checks = Object.fromEntries(Object.keys(CHECKS).map((name) => [name, values[name]]));
  const totals = Object.fromEntries(Object.keys(TOTALS).map((name) => [name, values[name]]));
  const sound = Object.values(checks).every((count) => count === 0) && totals.entries_total === 0;
  return { checks, totals, sound };
}

function readSqlite(file, queries) {
  const database = new SqliteDriver(file, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(Object.entries(queries).map(([name, query]) => [name, Number(database.prepare(query).get().n)]));
  } finally {
    database.close();
  }
}

async function readPostgres(url, queries) {
  assertLoopback(url);
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const values = {};
    for (const [name, query] of Object.entries(queries)) values[name] = Number((await client.query(query)).rows[0].n);
    return values;
  } finally {
    await client.end();
  }
}

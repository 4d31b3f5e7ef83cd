import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { LEDGER_CHECKS, verifyLedger } from './ledger.verify.js';
import { walletsClient, type WalletsClient } from '../wallets/wallets.fixtures.js';

const SVC = fileURLToPath(new URL('../../../bin/svc.js', import.meta.url));

/** `svc ledger verify` against the test's database; the exit code and both streams. */
async function svcLedgerVerify(databaseUrl: string, projectId: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SVC, 'ledger', 'verify', '--project', projectId], {
      env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describeEachDialect('svc ledger verify', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;
  const databaseUrl = () => {
    const config = current().service.config.database;
    return config.dialect === 'sqlite' ? `sqlite:${config.file}` : config.url;
  };
  let wallets: string[] = [];

  beforeAll(async () => {
    client = await walletsClient(current().service, current());
    wallets = [(await client.createWallet()).id, (await client.createWallet()).id];
    await client.credit(wallets[0]!, 100, { idempotency_key: 'k1' });
    await client.debit(wallets[0]!, 30);
    await client.transfer(wallets[0]!, wallets[1]!, 20);
  });

  it('finds a sound ledger sound, in the service and through the CLI (exit 0)', async () => {
    const report = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(report.sound).toBe(true);
    expect(Object.keys(report.checks)).toEqual([...LEDGER_CHECKS]);
    const cli = await svcLedgerVerify(databaseUrl(), current().projectId);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ sound: true, project_id: current().projectId });
    expect(Object.keys(JSON.parse(cli.stdout) as object)).toEqual(['sound', 'project_id', 'checks']);
    // It says which database it opened, on stderr, and never a password.
    const config = current().service.config.database;
    expect(cli.stderr).toContain(config.dialect === 'sqlite' ? `svc: database SQLite ${config.file}` : 'svc: database PostgreSQL postgres');
  });

  it('names every broken invariant, and the CLI exits 1 naming each on stderr', async () => {
    const k = current().service.db.kysely;
    // The ledger's tables are append-only (triggers), so the damage is done by appending: a wallet
    // balance that no longer equals its entries (a negative one the schema's CHECK refuses), a stray
    // entry that unbalances the debit and breaks its wallet's running balance, and a transaction without
    // entries or its event.
    await sql`update wallets set balance = 5 where id = ${wallets[1]!}`.execute(k);
    const debit = await k.selectFrom('ledger_transactions').selectAll().where('type', '=', 'debit').executeTakeFirstOrThrow();
    await k
      .insertInto('ledger_entries')
      .values({
        project_id: current().projectId,
        transaction_id: debit.id,
        account_id: wallets[1]!,
        amount: 1,
        balance_after: 12345,
        created_at: debit.created_at,
      })
      .execute();
    await k
      .insertInto('ledger_transactions')
      .values({ ...debit, id: `${debit.id}x`, idempotency_key: null })
      .execute();

    const report = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(report.sound).toBe(false);
    const broken = LEDGER_CHECKS.filter((check) => report.checks[check].violations > 0);
    expect(broken).toEqual([
      'balances_not_sum_of_entries',
      'running_balances_wrong',
      'transactions_not_summing_to_zero',
      'transactions_with_fewer_than_two_entries',
      'money_events_missing_or_extra',
      'grants_not_summing_to_balance',
    ]);
    expect(report.checks.balances_not_sum_of_entries.examples).toEqual([wallets[1]]);
    expect(report.checks.transactions_not_summing_to_zero.examples).toEqual([debit.id]);
    expect(report.checks.transactions_with_fewer_than_two_entries.examples).toEqual([`${debit.id}x`]);

    const cli = await svcLedgerVerify(databaseUrl(), current().projectId);
    expect(cli.code).toBe(1);
    for (const check of broken) expect(cli.stderr).toContain(`ledger invariant broken: ${check}`);
    expect(cli.stderr).not.toContain('idempotency_keys_applied_twice');
  });

  it('names broken grant and hold invariants: grants not summing to the balance, held not the pending holds, available below the credit limit', async () => {
    const k = current().service.db.kysely;
    const wallet = (await client.createWallet()).id;
    await client.credit(wallet, 50);
    expect((await client.request('POST', `/v1/wallets/${wallet}/holds`, { amount: 20 })).statusCode).toBe(201);
    const examples = async () => {
      const report = await verifyLedger(current().service.db, { projectId: current().projectId });
      return LEDGER_CHECKS.filter((check) => report.checks[check].examples.includes(wallet));
    };
    expect(await examples()).toEqual([]);
    await sql`update wallet_grants set remaining = remaining - 1 where wallet_id = ${wallet}`.execute(k);
    expect(await examples()).toEqual(['grants_not_summing_to_balance']);
    await sql`update wallets set held = 60 where id = ${wallet}`.execute(k);
    expect(await examples()).toEqual(['grants_not_summing_to_balance', 'held_not_sum_of_pending_holds', 'available_below_credit_limit']);
  });

  it("holds per unit: each custom unit has its own issuance account, and an entry outside its transaction's unit is named", async () => {
    const k = current().service.db.kysely;
    const credits = (await client.createWallet({ currency: 'CREDITS' })).id;
    const gpuHours = (await client.createWallet({ currency: 'GPU_HOURS' })).id;
    const credit = await client.credit(credits, 70);
    await client.credit(gpuHours, 9);
    await client.debit(credits, 20);
    const issued = await k
      .selectFrom('ledger_entries')
      .select(['account_id', (eb) => eb.fn.sum<number | string>('amount').as('total')])
      .where('project_id', '=', current().projectId)
      .where('account_id', 'in', ['issuance:CREDITS', 'issuance:GPU_HOURS'])
      .groupBy('account_id')
      .orderBy('account_id')
      .execute();
    expect(issued.map((row) => [row.account_id, Number(row.total)])).toEqual([
      ['issuance:CREDITS', -50],
      ['issuance:GPU_HOURS', -9],
    ]);
    const outside = async () =>
      (await verifyLedger(current().service.db, { projectId: current().projectId })).checks.entries_outside_their_unit.examples;
    expect(await outside()).toEqual([]);
    // A CREDITS credit's counter-entry booked on GPU_HOURS' issuance account mixes the units.
    await k
      .insertInto('ledger_entries')
      .values({
        project_id: current().projectId,
        transaction_id: credit.id,
        account_id: 'issuance:GPU_HOURS',
        amount: -1,
        balance_after: null,
        created_at: credit.created_at,
      })
      .execute();
    expect(await outside()).toEqual([credit.id]);
  });

  it('names reversals beyond their original, and reversals of what cannot be reversed or of other wallets', async () => {
    const k = current().service.db.kysely;
    const wallet = (await client.createWallet()).id;
    const other = (await client.createWallet()).id;
    const credit = await client.credit(wallet, 40);
    const reversed = await client.request('POST', `/v1/transactions/${credit.id}/reverse`, { amount: 30 });
    expect(reversed.statusCode, reversed.body).toBe(201);
    const row = await k
      .selectFrom('ledger_transactions')
      .selectAll()
      .where('id', '=', reversed.json<{ id: string }>().id)
      .executeTakeFirstOrThrow();
    const report = async () => verifyLedger(current().service.db, { projectId: current().projectId });
    expect((await report()).checks.reversals_exceeding_original.violations).toBe(0);
    // Appended, as the ledger is append-only: a second reversal of 30 (60 of a credit of 40), and a
    // reversal of that reversal on another wallet.
    await k
      .insertInto('ledger_transactions')
      .values({ ...row, id: `${row.id}x`, idempotency_key: null })
      .execute();
    await k
      .insertInto('ledger_transactions')
      .values({ ...row, id: `${row.id}y`, idempotency_key: null, reverses: row.id, wallet_id: other, amount: 1 })
      .execute();
    const checks = (await report()).checks;
    expect(checks.reversals_exceeding_original.examples).toEqual([credit.id]);
    expect(checks.reversals_not_of_a_reversible_transaction.examples).toEqual([`${row.id}y`]);
  });
});

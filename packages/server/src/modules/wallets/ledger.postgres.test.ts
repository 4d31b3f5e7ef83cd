import { beforeAll, describe, expect, inject, it } from 'vitest';
import { isUniqueViolation } from '../../db/transaction.js';
import type { IdempotencyClaim } from '../../http/idempotency.store.js';
import { newId } from '../../shared/ids.js';
import { useTestService } from '../../test/service.js';
import { type BatchedMovement, jsonWithOpenNumber, moveManyInOneStatement } from './ledger.postgres.js';
import { ledgerViolations, SOUND_LEDGER, walletsClient, type WalletsClient } from './wallets.fixtures.js';

/**
 * The batch statement of a hot wallet on its own, with batches built by hand: the order it applies
 * them in, its balances, its events, and its all-or-nothing refusals. (Through HTTP the batches
 * form by timing; the ledger, concurrency and property suites cover that path too.)
 */
describe.skipIf(inject('postgresAdminUrl') === '')('moveManyInOneStatement (PostgreSQL)', () => {
  const current = useTestService('postgres');
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  function movement(type: 'credit' | 'debit', amount: number, key?: string): BatchedMovement {
    const transactionId = newId('txn');
    const claim: IdempotencyClaim | undefined =
      key === undefined
        ? undefined
        : { projectId: current().projectId, scope: '', key, requestHash: 'hash', fields: { amount: 'x' }, requestId: 'req_test' };
    return {
      transactionId,
      type,
      amount,
      description: null,
      metadataJson: '{}',
      createdAt: new Date().toISOString(),
      event: {
        id: newId('evt'),
        type: type === 'credit' ? 'wallet.credit.added' : 'wallet.credit.deducted',
        data: jsonWithOpenNumber({ transaction_id: transactionId, balance: 0 }, 'balance'),
      },
      lowBalanceEventId: type === 'debit' ? newId('evt') : undefined,
      idempotency:
        claim === undefined ? undefined : { claim, response: jsonWithOpenNumber({ id: transactionId, balance_after: 0 }, 'balance_after') },
      audit: undefined,
    };
  }

  const run = (walletId: string, movements: BatchedMovement[]) =>
    moveManyInOneStatement(current().service.db.kysely, { projectId: current().projectId, walletId, movements });

  it('applies the credits first and then the debits, answering each one its own balance after', async () => {
    const wallet = await client.createWallet({ low_balance_threshold: 25 });
    await client.credit(wallet.id, 20);
    const batch = [movement('debit', 30), movement('credit', 50), movement('debit', 40), movement('credit', 10)];
    // 20 → +50 = 70 → +10 = 80 → -30 = 50 → -40 = 10 (crossing 25 once, on the last debit).
    expect(await run(wallet.id, batch)).toEqual([50, 70, 10, 80]);
    expect(await client.balance(wallet.id)).toBe(10);
    const low = await current()
      .service.db.kysely.selectFrom('events')
      .select(['idempotency_key', 'data'])
      .where('type', '=', 'wallet.balance.low')
      .execute();
    expect(low).toEqual([
      {
        idempotency_key: `${batch[2]?.transactionId ?? ''}.wallet.balance.low`,
        data: JSON.stringify({ wallet_id: wallet.id, balance: 10, threshold: 25, currency: 'USD' }),
      },
    ]);
    const events = await current()
      .service.db.kysely.selectFrom('events')
      .select('data')
      .where(
        'id',
        'in',
        batch.map((item) => item.event.id),
      )
      .execute();
    expect(
      events
        .map((event) => JSON.parse(event.data) as { balance: number })
        .map((data) => data.balance)
        .sort(),
    ).toEqual([10, 50, 70, 80]);
    expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
  });

  it('writes nothing when the batch would take the balance below zero, or a key is already stored', async () => {
    const wallet = await client.createWallet();
    await client.credit(wallet.id, 10);
    expect(await run(wallet.id, [movement('credit', 5), movement('debit', 16)])).toBeUndefined();
    expect(await client.balance(wallet.id)).toBe(10);

    const claimed = movement('credit', 1, 'batch-key-1');
    expect(await run(wallet.id, [claimed, movement('credit', 2)])).toEqual([11, 13]);
    const again = movement('credit', 1, 'batch-key-1');
    expect(await run(wallet.id, [movement('credit', 2), again])).toBeUndefined();
    expect(await client.balance(wallet.id)).toBe(13);
  });

  it('fails whole on a key given twice in one batch', async () => {
    const wallet = await client.createWallet();
    const error = await run(wallet.id, [movement('credit', 1, 'twice'), movement('credit', 1, 'twice')]).catch((caught: unknown) => caught);
    expect(isUniqueViolation(error)).toBe(true);
    expect(await client.balance(wallet.id)).toBe(0);
    expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
  });
});

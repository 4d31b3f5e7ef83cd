import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import {
  errorCode,
  expectStatus,
  ledgerViolations,
  schemaErrors,
  SOUND_LEDGER,
  walletsClient,
  type WalletsClient,
} from '../wallets/wallets.fixtures.js';
import {
  AMOUNT_MAX,
  BALANCE_MAX,
  type Transaction,
  TransactionSchema,
  type Transfer,
  TransferSchema,
  type WalletTransactionList,
  WalletTransactionListSchema,
} from '../wallets/wallets.schemas.js';

describeEachDialect('ledger', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;
  let otherProject: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
    const other = await service.projects.createProject({ name: 'Other project' });
    otherProject = await walletsClient(service, { projectId: other.project.id, secretKey: other.secretKey });
  });

  /** The project's wallet events, oldest first, as `type` and parsed `data`. */
  async function eventsOf(walletId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
    const rows = await current()
      .service.db.kysely.selectFrom('events')
      .select(['type', 'data', 'created_at'])
      .where('project_id', '=', current().projectId)
      .where('type', 'like', 'wallet.%')
      .orderBy('created_at')
      .orderBy('type', 'desc') // within one transaction: sent before received
      .execute();
    for (const row of rows) {
      // The webhook body embeds the stored text as it is: compact JSON on both dialects.
      expect(row.data).toBe(JSON.stringify(JSON.parse(row.data)));
    }
    return rows
      .map((row) => ({ type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }))
      .filter(({ data }) => data['wallet_id'] === walletId || data['from'] === walletId || data['to'] === walletId);
  }

  async function countRows(table: 'ledger_transactions' | 'ledger_entries' | 'events'): Promise<number> {
    const row = await current()
      .service.db.kysely.selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return row.count;
  }

  async function snapshot(): Promise<number[]> {
    return [await countRows('ledger_transactions'), await countRows('ledger_entries'), await countRows('events')];
  }

  describe('credits and debits', () => {
    it('credits a wallet: 201 transaction, balance, history, event', async () => {
      const wallet = await client.createWallet();
      const response = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, {
        amount: 150,
        description: 'Welcome bonus',
        metadata: { campaign: 'spring' },
      });
      const transaction = expectStatus<Transaction>(response, 201);
      expect(schemaErrors(TransactionSchema, transaction)).toEqual([]);
      expect(transaction).toMatchObject({
        object: 'transaction',
        type: 'credit',
        wallet_id: wallet.id,
        amount: 150,
        balance_after: 150,
        description: 'Welcome bonus',
        metadata: { campaign: 'spring' },
        idempotency_key: null,
        status: 'completed',
      });
      expect(transaction.id).toMatch(/^txn_[0-9a-z]{9}[0-9A-Za-z]{22}$/);
      // `categories` only on a debit restricted to categories (modules/wallets/categories.test.ts);
      // `reverses` only on reversals, `reversed_amount` only when read one by one (reversals.test.ts).
      const notOnACredit = new Set(['categories', 'reverses', 'reversed_amount']);
      expect(Object.keys(transaction)).toEqual(Object.keys(TransactionSchema.properties).filter((key) => !notOnACredit.has(key)));
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      expect(await client.balance(wallet.id)).toBe(150);
      // Read one by one, it also shows what reversals gave back of it (docs/adr/0024-reversals.md).
      expect(expectStatus(await client.request('GET', `/v1/transactions/${transaction.id}`), 200)).toEqual({
        ...transaction,
        reversed_amount: 0,
      });
      expect(await eventsOf(wallet.id)).toEqual([
        {
          type: 'wallet.credit.added',
          data: { wallet_id: wallet.id, transaction_id: transaction.id, amount: 150, balance: 150, description: 'Welcome bonus' },
        },
      ]);
    });

    it('debits a wallet: 201 transaction and a wallet.credit.deducted event', async () => {
      const wallet = await client.createWallet();
      await client.credit(wallet.id, 100);
      const debit = await client.debit(wallet.id, 30, { description: 'Image generation' });
      expect(debit).toMatchObject({ type: 'debit', amount: 30, balance_after: 70, description: 'Image generation', metadata: {} });
      expect(await client.balance(wallet.id)).toBe(70);
      expect(await eventsOf(wallet.id)).toContainEqual({
        type: 'wallet.credit.deducted',
        data: { wallet_id: wallet.id, transaction_id: debit.id, amount: 30, balance: 70, description: 'Image generation' },
      });
    });

    it('refuses a debit above the balance with 422 insufficient_credits and changes nothing', async () => {
      const wallet = await client.createWallet();
      await client.credit(wallet.id, 40);
      const before = await snapshot();
      const response = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 100 });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        error: {
          type: 'invalid_request_error',
          code: 'insufficient_credits',
          param: 'amount',
          message: `Wallet ${wallet.id} has 40 credits; 100 requested.`,
        },
      });
      expect(await client.balance(wallet.id)).toBe(40);
      expect(await snapshot()).toEqual(before);
      await client.debit(wallet.id, 40);
      expect(await client.balance(wallet.id)).toBe(0);
    });

    it.each([
      ['zero', 0],
      ['a negative amount', -5],
      ['a fraction', 1.5],
      ['a string', '100'],
      ['null', null],
      ['more than 10^12', AMOUNT_MAX + 1],
      ['a boolean', true],
    ])('refuses %s as amount with 400 parameter_invalid', async (_label, amount) => {
      const wallet = await client.createWallet();
      for (const action of ['credits', 'debits']) {
        const response = await client.request('POST', `/v1/wallets/${wallet.id}/${action}`, { amount });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'amount' } });
      }
      expect(await client.balance(wallet.id)).toBe(0);
    });

    it.each([
      ['no amount', {}, 'parameter_missing', 'amount'],
      ['an unknown field', { amount: 1, currency: 'USD' }, 'parameter_unknown', 'currency'],
      ['a numeric description', { amount: 1, description: 5 }, 'parameter_invalid', 'description'],
      ['a 1001-character description', { amount: 1, description: 'x'.repeat(1001) }, 'parameter_invalid', 'description'],
      ['a number in metadata', { amount: 1, metadata: { a: 1 } }, 'parameter_invalid', 'metadata.a'],
      ['a numeric idempotency_key', { amount: 1, idempotency_key: 5 }, 'parameter_invalid', 'idempotency_key'],
      ['an empty idempotency_key', { amount: 1, idempotency_key: '' }, 'parameter_invalid', 'idempotency_key'],
    ])('refuses %s with 400', async (_label, body, code, param) => {
      const wallet = await client.createWallet();
      const response = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code, param } });
    });

    it('moves 10^12 at once', async () => {
      const wallet = await client.createWallet();
      expect((await client.credit(wallet.id, AMOUNT_MAX)).balance_after).toBe(AMOUNT_MAX);
      expect((await client.debit(wallet.id, AMOUNT_MAX)).balance_after).toBe(0);
    });

    it("answers 404 for an unknown wallet and for another project's, and changes nothing", async () => {
      const foreign = await otherProject.createWallet();
      await otherProject.credit(foreign.id, 10);
      const before = await snapshot();
      for (const id of [newId('wlt'), foreign.id]) {
        for (const action of ['credits', 'debits']) {
          const response = await client.request('POST', `/v1/wallets/${id}/${action}`, { amount: 1 });
          expect([response.statusCode, errorCode(response)]).toEqual([404, 'resource_missing']);
        }
      }
      expect(await otherProject.balance(foreign.id)).toBe(10);
      expect(await snapshot()).toEqual(before);
    });

    it('refuses a credit that would take the balance above 2^53 - 1 with 422 balance_limit_exceeded', async () => {
      // Reaching the limit through the API takes 9,008 credits of 10^12; a separate project holds
      // this wallet, set near the limit directly, so the ledger checks of this file stay exact.
      const { service } = current();
      const other = await service.projects.createProject({ name: 'Near the limit' });
      const near = await walletsClient(service, { projectId: other.project.id, secretKey: other.secretKey });
      const wallet = await near.createWallet();
      await service.db.kysely
        .updateTable('wallets')
        .set({ balance: BALANCE_MAX - 10 })
        .where('id', '=', wallet.id)
        .execute();
      const refused = await near.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 11 });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ error: { code: 'balance_limit_exceeded', param: 'amount' } });
      expect((await near.credit(wallet.id, 10)).balance_after).toBe(BALANCE_MAX);
      const source = await near.createWallet();
      await near.credit(source.id, 5);
      const transfer = await near.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: source.id,
        to_wallet_id: wallet.id,
        amount: 1,
      });
      expect([transfer.statusCode, errorCode(transfer)]).toEqual([422, 'balance_limit_exceeded']);
      expect(await near.balance(source.id)).toBe(5);
    });
  });

  describe('transfers', () => {
    it('moves credits between two wallets: 201 transfer, balances, both histories, two events', async () => {
      const from = await client.createWallet();
      const to = await client.createWallet();
      await client.credit(from.id, 100);
      const response = await client.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: from.id,
        to_wallet_id: to.id,
        amount: 60,
        description: 'Gift',
      });
      const transfer = expectStatus<Transfer>(response, 201);
      expect(schemaErrors(TransferSchema, transfer)).toEqual([]);
      expect(transfer).toMatchObject({
        object: 'transfer',
        status: 'completed',
        from_wallet_id: from.id,
        to_wallet_id: to.id,
        amount: 60,
        description: 'Gift',
        idempotency_key: null,
      });
      expect(transfer.id).toMatch(/^txn_/);
      expect(Object.keys(transfer)).toEqual(
        Object.keys(TransferSchema.properties).filter((key) => key !== 'categories' && key !== 'reversed_amount'),
      );
      expect([await client.balance(from.id), await client.balance(to.id)]).toEqual([40, 60]);
      expect(expectStatus(await client.request('GET', `/v1/transactions/${transfer.id}`), 200)).toEqual({
        ...transfer,
        reversed_amount: 0,
      });

      const outgoing = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${from.id}/transactions`), 200);
      expect(schemaErrors(WalletTransactionListSchema, outgoing)).toEqual([]);
      expect(outgoing.data[0]).toMatchObject({
        id: transfer.id,
        type: 'transfer_out',
        wallet_id: from.id,
        counterparty_wallet_id: to.id,
        amount: 60,
        balance_after: 40,
        description: 'Gift',
      });
      const incoming = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${to.id}/transactions`), 200);
      expect(incoming.data).toHaveLength(1);
      expect(incoming.data[0]).toMatchObject({ id: transfer.id, type: 'transfer_in', counterparty_wallet_id: from.id, balance_after: 60 });

      const data = { transfer_id: transfer.id, from: from.id, to: to.id, amount: 60, status: 'completed' };
      expect(await eventsOf(to.id)).toEqual([
        { type: 'wallet.transfer.sent', data },
        { type: 'wallet.transfer.received', data },
      ]);
    });

    it('refuses every broken rule with its own code and changes nothing', async () => {
      const from = await client.createWallet();
      const to = await client.createWallet();
      const euros = await client.createWallet({ currency: 'EUR' });
      const foreign = await otherProject.createWallet();
      await client.credit(from.id, 50);
      await client.credit(euros.id, 50);
      await otherProject.credit(foreign.id, 50);
      const before = await snapshot();
      const cases: [Record<string, unknown>, number, string, string | undefined][] = [
        [{ from_wallet_id: from.id, to_wallet_id: from.id, amount: 1 }, 400, 'same_wallet', 'to_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: euros.id, amount: 1 }, 422, 'currency_mismatch', 'to_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: to.id, amount: 51 }, 422, 'insufficient_credits', 'amount'],
        [{ from_wallet_id: newId('wlt'), to_wallet_id: to.id, amount: 1 }, 404, 'resource_missing', 'from_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: newId('wlt'), amount: 1 }, 404, 'resource_missing', 'to_wallet_id'],
        [{ from_wallet_id: foreign.id, to_wallet_id: to.id, amount: 1 }, 404, 'resource_missing', 'from_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: foreign.id, amount: 1 }, 404, 'resource_missing', 'to_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: to.id, amount: 0 }, 400, 'parameter_invalid', 'amount'],
        [{ from_wallet_id: from.id, to_wallet_id: to.id, amount: '5' }, 400, 'parameter_invalid', 'amount'],
        [{ from_wallet_id: from.id, amount: 1 }, 400, 'parameter_missing', 'to_wallet_id'],
        [{ from_wallet_id: from.id, to_wallet_id: to.id, amount: 1, metadata: {} }, 400, 'parameter_unknown', 'metadata'],
      ];
      for (const [body, status, code, param] of cases) {
        const response = await client.request('POST', '/v1/wallets/transfer', body);
        expect([response.statusCode, response.json().error], JSON.stringify(body)).toEqual([
          status,
          expect.objectContaining({ code, param }),
        ]);
      }
      expect([await client.balance(from.id), await client.balance(to.id), await client.balance(euros.id)]).toEqual([50, 0, 50]);
      expect(await otherProject.balance(foreign.id)).toBe(50);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('wallet.balance.low', () => {
    it('is sent once per crossing of the threshold by a debit or a transfer', async () => {
      const wallet = await client.createWallet({ low_balance_threshold: 50 });
      const other = await client.createWallet();
      await client.credit(wallet.id, 100);
      await client.debit(wallet.id, 50); // 50: at the threshold, not below
      const crossing = await client.debit(wallet.id, 1); // 49: crossed
      await client.debit(wallet.id, 9); // 40: already below
      await client.credit(wallet.id, 60); // 100: back above; credits never send it
      await client.transfer(wallet.id, other.id, 70); // 30: crossed again
      const low = (await eventsOf(wallet.id)).filter((event) => event.type === 'wallet.balance.low');
      expect(low).toHaveLength(2);
      expect(low).toEqual(
        expect.arrayContaining([
          { type: 'wallet.balance.low', data: { wallet_id: wallet.id, balance: 49, threshold: 50, currency: 'USD' } },
          { type: 'wallet.balance.low', data: { wallet_id: wallet.id, balance: 30, threshold: 50, currency: 'USD' } },
        ]),
      );
      expect(crossing.balance_after).toBe(49);
    });

    it('is not sent without a threshold', async () => {
      const wallet = await client.createWallet();
      await client.credit(wallet.id, 10);
      await client.debit(wallet.id, 10);
      expect((await eventsOf(wallet.id)).map((event) => event.type).sort()).toEqual(['wallet.credit.added', 'wallet.credit.deducted']);
    });
  });

  describe('idempotency', () => {
    it('replays a credit with the same key: the original transaction, Idempotent-Replayed: true, applied once', async () => {
      const wallet = await client.createWallet();
      const body = { amount: 25, description: 'Top up' };
      const first = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, body, { 'idempotency-key': 'order-1' });
      const second = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, body, { 'idempotency-key': 'order-1' });
      expect(first.statusCode).toBe(201);
      expect(first.json()).toMatchObject({ idempotency_key: 'order-1', balance_after: 25 });
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toBe(first.body);
      expect(await client.balance(wallet.id)).toBe(25);
      expect(await eventsOf(wallet.id)).toHaveLength(1);
    });

    it('takes the key from the body or the header alike, and refuses two different ones', async () => {
      const wallet = await client.createWallet();
      const first = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 5, idempotency_key: 'd-1' });
      expect([first.statusCode, errorCode(first)]).toEqual([422, 'insufficient_credits']);
      await client.credit(wallet.id, 10);
      const viaHeader = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 5 }, { 'idempotency-key': 'd-1' });
      expect(viaHeader.statusCode).toBe(422);
      expect(viaHeader.headers['idempotent-replayed']).toBe('true');
      expect(viaHeader.body).toBe(first.body);
      const both = await client.request(
        'POST',
        `/v1/wallets/${wallet.id}/credits`,
        { amount: 5, idempotency_key: 'c-1' },
        { 'idempotency-key': 'c-1' },
      );
      expect(both.statusCode).toBe(201);
      const replay = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 5, idempotency_key: 'c-1' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const differing = await client.request(
        'POST',
        `/v1/wallets/${wallet.id}/credits`,
        { amount: 5, idempotency_key: 'c-2' },
        { 'idempotency-key': 'c-3' },
      );
      expect(differing.statusCode).toBe(400);
      expect(differing.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'idempotency_key' } });
      expect(await client.balance(wallet.id)).toBe(15);
    });

    it('remembers an insufficient_credits refusal: a retry with the key cannot change the outcome', async () => {
      const wallet = await client.createWallet();
      await client.credit(wallet.id, 10);
      const refused = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 50, idempotency_key: 'pay-7' });
      expect([refused.statusCode, errorCode(refused)]).toEqual([422, 'insufficient_credits']);
      await client.credit(wallet.id, 100);
      const retried = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 50, idempotency_key: 'pay-7' });
      expect(retried.statusCode).toBe(422);
      expect(retried.headers['idempotent-replayed']).toBe('true');
      expect(await client.balance(wallet.id)).toBe(110);
    });

    it('refuses the same key with a different body with 422 naming the field, and changes nothing', async () => {
      const wallet = await client.createWallet();
      await client.credit(wallet.id, 10, { idempotency_key: 'k-1', description: 'a' });
      const amount = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, {
        amount: 11,
        idempotency_key: 'k-1',
        description: 'a',
      });
      expect(amount.statusCode).toBe(422);
      expect(amount.json()).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'amount' } });
      const description = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, {
        amount: 10,
        idempotency_key: 'k-1',
        description: 'b',
      });
      expect(description.json()).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'description' } });
      const route = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, {
        amount: 10,
        idempotency_key: 'k-1',
        description: 'a',
      });
      expect([route.statusCode, errorCode(route)]).toEqual([422, 'idempotency_key_reused']);
      expect(await client.balance(wallet.id)).toBe(10);
    });

    it('scopes credit and debit keys per wallet and transfer keys per project', async () => {
      const first = await client.createWallet();
      const second = await client.createWallet();
      const a = await client.credit(first.id, 5, { idempotency_key: 'same' });
      const b = await client.credit(second.id, 5, { idempotency_key: 'same' });
      expect(a.id).not.toBe(b.id);
      expect([await client.balance(first.id), await client.balance(second.id)]).toEqual([5, 5]);
      const transfer = await client.transfer(first.id, second.id, 1, { idempotency_key: 'same' });
      const replay = await client.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: first.id,
        to_wallet_id: second.id,
        amount: 1,
        idempotency_key: 'same',
      });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(transfer);
      const otherPair = await client.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: second.id,
        to_wallet_id: first.id,
        amount: 1,
        idempotency_key: 'same',
      });
      expect(otherPair.json()).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'from_wallet_id' } });
      expect([await client.balance(first.id), await client.balance(second.id)]).toEqual([4, 6]);
      // Another project may use the same keys freely.
      const foreign = await otherProject.createWallet();
      expect((await otherProject.credit(foreign.id, 3, { idempotency_key: 'same' })).balance_after).toBe(3);
    });

    it('keeps a key as a row of the one idempotency table: the transaction it made, or its refusal', async () => {
      const wallet = await client.createWallet();
      const credit = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 3 }, { 'idempotency-key': 'stored-1' });
      const refusal = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 9 }, { 'idempotency-key': 'stored-2' });
      const db = current().service.db.kysely;
      const keys = await db
        .selectFrom('idempotency_keys')
        .select(['scope', 'key', 'state', 'response_status', 'response_body', 'expires_at'])
        .where('project_id', '=', current().projectId)
        .where('key', 'in', ['stored-1', 'stored-2'])
        .orderBy('key')
        .execute();
      expect(keys).toEqual([
        {
          scope: `ledger:${wallet.id}`,
          key: 'stored-1',
          state: 'completed',
          response_status: 201,
          response_body: JSON.stringify({ transaction_id: credit.json<Transaction>().id }),
          expires_at: null,
        },
        {
          scope: `ledger:${wallet.id}`,
          key: 'stored-2',
          state: 'completed',
          response_status: 422,
          response_body: JSON.stringify({
            code: 'insufficient_credits',
            message: refusal.json<{ error: { message: string } }>().error.message,
            param: 'amount',
            request_id: refusal.headers['request-id'],
          }),
          expires_at: null,
        },
      ]);
      const refusalsTable = await db
        .selectFrom('ledger_refusals')
        .select('idempotency_key')
        .where('project_id', '=', current().projectId)
        .where('idempotency_key', '=', 'stored-2')
        .execute();
      expect(refusalsTable).toEqual([]);
      const replays = await Promise.all([
        client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 3 }, { 'idempotency-key': 'stored-1' }),
        client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 9 }, { 'idempotency-key': 'stored-2' }),
      ]);
      expect(replays.map((replay) => [replay.statusCode, replay.headers['idempotent-replayed'], replay.body])).toEqual([
        [201, 'true', credit.body],
        [422, 'true', refusal.body],
      ]);
    });

    it("keeps a batch's Idempotency-Key in clear with its answer, like a movement's, and replays it or refuses another body", async () => {
      const wallet = await client.createWallet();
      const body = { operations: [{ type: 'credit', wallet_id: wallet.id, amount: 2 }] };
      const batch = await client.request('POST', '/v1/wallets/batch', body, { 'idempotency-key': 'batch-in-clear' });
      expect(batch.statusCode).toBe(200);
      const row = await current()
        .service.db.kysely.selectFrom('idempotency_keys')
        .select(['scope', 'request_hash', 'request_fields', 'response_status', 'response_body', 'expires_at'])
        .where('project_id', '=', current().projectId)
        .where('key', '=', 'batch-in-clear')
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ scope: '', response_status: 200, response_body: batch.body, expires_at: null });
      expect(row.request_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.keys(JSON.parse(row.request_fields) as object).sort()).toEqual(['$route', 'operations']);
      const replay = await client.request('POST', '/v1/wallets/batch', body, { 'idempotency-key': 'batch-in-clear' });
      expect([replay.statusCode, replay.headers['idempotent-replayed'], replay.body]).toEqual([200, 'true', batch.body]);
      const other = await client.request(
        'POST',
        '/v1/wallets/batch',
        { operations: [{ type: 'credit', wallet_id: wallet.id, amount: 3 }] },
        { 'idempotency-key': 'batch-in-clear' },
      );
      expect(other.json()).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'operations' } });
      expect(await client.balance(wallet.id)).toBe(2);
    });

    it('applies a key once when the same request arrives many times at once', async () => {
      const wallet = await client.createWallet();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 7, idempotency_key: 'burst' }),
        ),
      );
      const created = responses.filter((response) => response.statusCode === 201);
      const inUse = responses.filter((response) => errorCode(response) === 'idempotency_key_in_use');
      expect(created.length + inUse.length).toBe(20);
      expect(new Set(created.map((response) => response.json<Transaction>().id)).size).toBe(1);
      expect(await client.balance(wallet.id)).toBe(7);
    });
  });

  describe('history and lookups', () => {
    it("pages through a wallet's transactions newest first", async () => {
      const wallet = await client.createWallet();
      const made: string[] = [];
      for (let amount = 1; amount <= 5; amount += 1) made.push((await client.credit(wallet.id, amount)).id);
      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; page < 3; page += 1) {
        const list = expectStatus<WalletTransactionList>(
          await client.request('GET', `/v1/wallets/${wallet.id}/transactions?limit=2${cursor === '' ? '' : `&starting_after=${cursor}`}`),
          200,
        );
        seen.push(...list.data.map((item) => item.id));
        expect(list.has_more).toBe(page < 2);
        cursor = list.data.at(-1)?.id ?? '';
      }
      expect(seen).toEqual(made.reverse());
      const balances = expectStatus<WalletTransactionList>(
        await client.request('GET', `/v1/wallets/${wallet.id}/transactions`),
        200,
      ).data.map((item) => item.balance_after);
      expect(balances).toEqual([15, 10, 6, 3, 1]);
    });

    it("answers 404 for another project's wallet, transaction or cursor", async () => {
      const wallet = await client.createWallet();
      const foreign = await otherProject.createWallet();
      const foreignCredit = await otherProject.credit(foreign.id, 1);
      const responses = [
        await client.request('GET', `/v1/wallets/${foreign.id}/transactions`),
        await client.request('GET', `/v1/transactions/${foreignCredit.id}`),
        await client.request('GET', `/v1/transactions/${newId('txn')}`),
        await client.request('GET', `/v1/wallets/${wallet.id}/transactions?starting_after=${foreignCredit.id}`),
      ];
      expect(responses.map((response) => [response.statusCode, errorCode(response)])).toEqual(Array(4).fill([404, 'resource_missing']));
      const bad = await client.request('GET', `/v1/wallets/${wallet.id}/transactions?limit=500`);
      expect([bad.statusCode, errorCode(bad)]).toEqual([400, 'parameter_invalid']);
    });
  });

  it('leaves a sound ledger behind', async () => {
    expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
  });
});

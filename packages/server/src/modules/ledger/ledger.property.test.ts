import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { randomBase62 } from '../../lib/ids.js';
import { systemClock } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import {
  errorCode,
  ledgerViolations,
  modelBalances,
  SOUND_LEDGER,
  walletsClient,
  type WalletsClient,
  walletsWithBalances,
} from '../wallets/wallets.fixtures.js';
import { LEDGER_CHECKS, verifyLedger } from './ledger.verify.js';
import {
  catchUp,
  category,
  categoryFields,
  expectCategoriesModel,
  expectPeriodsCreditedOnce,
  expectRestrictedDrawsKept,
  makeRecurringGrants,
  modelCategories,
  recurringCredits,
  recurringSpec,
  restriction,
} from './ledger.property.fixtures.js';
import { grantDuePeriods } from '../wallets/recurring-grants.service.js';
import type { Transaction, Transfer } from '../wallets/wallets.schemas.js';

/**
 * Random batches of credits, debits and transfers, sent all at once, with keys that repeat (same
 * request twice) and conflict (same key, other request), credits of random categories and draws
 * restricted to random categories (docs/adr/0021-categories.md), on wallets with and without a
 * credit limit (docs/adr/0023-credit-limits.md) and with recurring grants whose past periods the
 * recurring-grants job credits meanwhile (docs/adr/0022-recurring-grants.md); then random reversals
 * of what they made, whole or in part, all at once too (docs/adr/0024-reversals.md). Checked against
 * a model built only from the responses, and then against the ledger's invariants.
 */

const WALLETS = 4; // wallets 0-2 hold USD, wallet 3 EUR (transfers to or from it are refused)
const KEYS = 6;

type Operation =
  | {
      readonly kind: 'credits';
      readonly wallet: number;
      readonly amount: number;
      readonly key: number | null;
      readonly category: string | null;
    }
  | {
      readonly kind: 'debits';
      readonly wallet: number;
      readonly amount: number;
      readonly key: number | null;
      readonly categories: readonly string[] | null;
    }
  | {
      readonly kind: 'transfer';
      readonly from: number;
      readonly to: number;
      readonly amount: number;
      readonly key: number | null;
      readonly categories: readonly string[] | null;
    };

const key = fc.option(fc.integer({ min: 0, max: KEYS - 1 }), { freq: 2 });
const amount = fc.integer({ min: 1, max: 40 });
const walletIndex = fc.integer({ min: 0, max: WALLETS - 1 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('credits' as const), wallet: walletIndex, amount, key, category }),
  fc.record({ kind: fc.constant('debits' as const), wallet: walletIndex, amount, key, categories: restriction }),
  fc.record({ kind: fc.constant('transfer' as const), from: walletIndex, to: walletIndex, amount, key, categories: restriction }),
);

/** A reversal of the `target`-th movement made (modulo their number); `amount` null: all that is left. */
interface Reversal {
  readonly target: number;
  readonly amount: number | null;
  readonly key: number | null;
}
const reversal: fc.Arbitrary<Reversal> = fc.record({
  target: fc.nat({ max: 1000 }),
  amount: fc.option(fc.integer({ min: 1, max: 40 }), { freq: 2 }),
  key,
});

/** What a response may be; anything else (a 5xx above all) fails the property. */
const ALLOWED_REFUSALS = new Set([
  'insufficient_credits',
  'same_wallet',
  'currency_mismatch',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'reversal_exceeds_original',
]);

describeEachDialect('ledger property', (dialect) => {
  const current = useTestService(dialect, { env: { LOG_LEVEL: 'error' } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  it('concurrent credits, debits, transfers, reversals and recurring grants, with categories and repeated and conflicting keys, match the model and keep the ledger sound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 60 }), { minLength: WALLETS, maxLength: WALLETS }),
        fc.array(fc.constantFrom(0, 0, 30), { minLength: WALLETS, maxLength: WALLETS }),
        fc.array(reversal, { maxLength: 12 }),
        fc.array(recurringSpec(WALLETS), { maxLength: 3 }),
        async (operations, initial, creditLimits, reversals, recurring) => {
          const run = randomBase62(8);
          const { service, projectId } = current();
          const wallets = await walletsWithBalances(client, initial, creditLimits);
          const recurringGrants = await makeRecurringGrants(client, wallets, recurring);
          const send = (op: Operation): Promise<LightMyRequestResponse> => {
            const body = {
              ...(op.key === null ? {} : { idempotency_key: `${run}-${op.key}` }),
              ...(op.kind === 'credits' ? categoryFields(op.category, null) : categoryFields(null, op.categories)),
            };
            if (op.kind === 'transfer') {
              return client.request('POST', '/v1/wallets/transfer', {
                from_wallet_id: wallets[op.from],
                to_wallet_id: wallets[op.to],
                amount: op.amount,
                ...body,
              });
            }
            return client.request('POST', `/v1/wallets/${wallets[op.wallet] ?? ''}/${op.kind}`, { amount: op.amount, ...body });
          };

          // The recurring-grants job credits the grants' begun periods while the requests run.
          const job = () => grantDuePeriods({ db: service.db, clock: systemClock, ledger: service.ledger });
          const [responses] = await Promise.all([Promise.all(operations.map(send)), catchUp(job)]);
          // Then every keyed request once more, one at a time: each must replay what its key stored.
          const retries = await operations.reduce<Promise<(LightMyRequestResponse | undefined)[]>>(
            async (done, op) => [...(await done), op.key === null ? undefined : await send(op)],
            Promise.resolve([]),
          );

          // 1. Every answer is a success or a known refusal.
          for (const response of [...responses, ...retries]) {
            if (response === undefined || response.statusCode === 201) continue;
            expect(ALLOWED_REFUSALS, response.body).toContain(errorCode(response));
          }

          // 2. The model: start balances plus every distinct applied movement, taken from the responses,
          //    and the recurring grants' credits, as the wallets' histories list them: one per begun period.
          const applied = new Map<string, Transaction | Transfer>();
          for (const response of [...responses, ...retries]) {
            if (response?.statusCode === 201) {
              const movement = response.json<Transaction | Transfer>();
              applied.set(movement.id, movement);
            }
          }
          const periodCredits = await recurringCredits(client, wallets);
          await expectPeriodsCreditedOnce(service.db, projectId, recurringGrants, periodCredits);
          for (const credit of periodCredits) applied.set(credit.id, credit);
          let model = modelBalances(wallets, initial, applied.values());
          let balances = await Promise.all(wallets.map((wallet) => client.balance(wallet)));
          expect(balances).toEqual(model);
          expect(balances.every((balance, index) => balance >= -(creditLimits[index] ?? 0))).toBe(true);
          // ... and by category: restricted draws took only their categories' grants, never debt.
          expectRestrictedDrawsKept(applied.values());
          await expectCategoriesModel(client, wallets, modelCategories(wallets, initial, applied.values()));

          // 2b. Reversals of what was made, all at once: the model gives back what each reported.
          const made = [...applied.values()];
          const reversalResponses = await Promise.all(
            reversals.map((one) => {
              const target = made[one.target % Math.max(made.length, 1)];
              if (target === undefined) return Promise.resolve(undefined);
              const body = {
                ...(one.amount === null ? {} : { amount: one.amount }),
                ...(one.key === null ? {} : { idempotency_key: `${run}-reversal-${one.key}` }),
              };
              return client.request('POST', `/v1/transactions/${target.id}/reverse`, body);
            }),
          );
          const reversedOf = new Map<string, number>();
          const delta = new Map<string, number>();
          const add = (walletId: string, credits: number) => delta.set(walletId, (delta.get(walletId) ?? 0) + credits);
          for (const response of reversalResponses) {
            if (response === undefined) continue;
            if (response.statusCode !== 201) {
              expect(ALLOWED_REFUSALS, response.body).toContain(errorCode(response));
              continue;
            }
            const reversed = response.json<Transaction>();
            expect(reversed.type).toBe('reversal');
            if (applied.has(reversed.id)) continue; // a key's replay
            applied.set(reversed.id, reversed);
            const original = made.find((movement) => movement.id === reversed.reverses);
            expect(original, reversed.reverses).toBeDefined();
            if (original === undefined) continue;
            reversedOf.set(original.id, (reversedOf.get(original.id) ?? 0) + reversed.amount);
            if (original.object === 'transfer') {
              add(original.from_wallet_id, reversed.amount);
              add(original.to_wallet_id, -reversed.amount);
            } else {
              add(original.wallet_id, original.type === 'credit' ? -reversed.amount : reversed.amount);
            }
          }
          for (const movement of made) expect(reversedOf.get(movement.id) ?? 0).toBeLessThanOrEqual(movement.amount);
          model = model.map((balance, index) => balance + (delta.get(wallets[index] ?? '') ?? 0));
          balances = await Promise.all(wallets.map((wallet) => client.balance(wallet)));
          expect(balances).toEqual(model);
          expect(balances.every((balance, index) => balance >= -(creditLimits[index] ?? 0))).toBe(true);

          // 3. The database holds exactly the movements the responses reported, no more.
          const stored = await current()
            .service.db.kysely.selectFrom('ledger_entries')
            .select('transaction_id')
            .distinct()
            .where('project_id', '=', current().projectId)
            .where('account_id', 'in', wallets)
            .execute();
          const initialCredits = initial.filter((value) => value > 0).length;
          expect(stored.length).toBe(applied.size + initialCredits);

          // 4. One key, one outcome: a key that applied once never applied again, and every retry of
          //    a request replays its key's stored answer.
          const perKey = new Map<string, Set<string>>();
          operations.forEach((op, index) => {
            if (op.key === null) return;
            const scope = op.kind === 'transfer' ? '' : String(op.wallet);
            const outcome = responses[index]?.statusCode === 201 ? responses[index]?.json<{ id: string }>().id : undefined;
            const name = `${scope}/${op.key}`;
            if (outcome !== undefined) perKey.set(name, new Set([...(perKey.get(name) ?? []), outcome]));
            const retry = retries[index];
            const retryCode = retry === undefined ? undefined : errorCode(retry);
            if (retryCode !== 'idempotency_key_reused') expect(retry?.headers['idempotent-replayed'], retry?.body).toBe('true');
          });
          for (const ids of perKey.values()) expect(ids.size).toBe(1);

          // 5. The ledger's invariants over everything the project holds.
          expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
          // ... and as `svc ledger verify` checks them.
          const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
          expect(verification.checks).toEqual(Object.fromEntries(LEDGER_CHECKS.map((check) => [check, { violations: 0, examples: [] }])));
        },
      ),
      { numRuns: 20 },
    );
  }, 60_000);
});

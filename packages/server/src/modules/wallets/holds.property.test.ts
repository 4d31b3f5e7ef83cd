import fc from 'fast-check';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import { settleExpired } from './holds.service.js';
import type { Hold } from '../ledger/holds.schemas.js';
import { LEDGER_CHECKS, verifyLedger } from '../ledger/ledger.verify.js';
import { walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Wallet } from './wallets.schemas.js';

/**
 * Random interleavings of credits (with and without expiry and priority), debits, transfers, holds,
 * captures, voids, time passing on a test clock and runs of the expiry job, one at a time, on
 * wallets with and without a credit limit. After every step: balance = Σ entries, Σ
 * grants.remaining − debt = balance, 0 ≤ debt ≤ credit_limit, held = Σ pending holds, and the
 * `available` a read shows is balance − unexpired pending holds − expired credits not yet removed,
 * never below −credit_limit. At the end of each run: no debit, transfer or hold drew on a grant at or
 * after its expiry, every expiry came at or after it (docs/adr/0018-holds-and-grants.md), and `svc
 * ledger verify` finds nothing (docs/adr/0023-credit-limits.md).
 */

const WALLETS = 3;

type Step =
  | { kind: 'credit'; wallet: number; amount: number; priority: number | null; expiresInSeconds: number | null }
  | { kind: 'debit' | 'hold'; wallet: number; amount: number; expiresInSeconds: number }
  | { kind: 'transfer'; from: number; to: number; amount: number }
  | { kind: 'capture' | 'void'; hold: number; amount: number | null }
  | { kind: 'advance'; milliseconds: number }
  | { kind: 'settle' };

const wallet = fc.integer({ min: 0, max: WALLETS - 1 });
/** Each wallet's credit limit: none, or one a few movements exhaust. */
const creditLimits = fc.array(fc.constantFrom(0, 0, 20, 45), { minLength: WALLETS, maxLength: WALLETS });
const amount = fc.integer({ min: 1, max: 30 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('credit' as const),
    wallet,
    amount,
    priority: fc.option(fc.integer({ min: 0, max: 100 })),
    expiresInSeconds: fc.option(fc.integer({ min: 1, max: 20 })),
  }),
  fc.record({
    kind: fc.constantFrom('debit' as const, 'hold' as const),
    wallet,
    amount,
    expiresInSeconds: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({ kind: fc.constant('transfer' as const), from: wallet, to: wallet, amount }),
  fc.record({ kind: fc.constantFrom('capture' as const, 'void' as const), hold: fc.nat(), amount: fc.option(amount) }),
  fc.record({ kind: fc.constant('advance' as const), milliseconds: fc.integer({ min: 0, max: 8000 }) }),
  fc.record({ kind: fc.constant('settle' as const) }),
);

/** What a response may be; anything else (a 5xx above all) fails the property. */
const ALLOWED = new Set([200, 201, 400, 409, 422]);

describeEachDialect('holds and grants property', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock }, env: { LOG_LEVEL: 'error' } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  async function checkInvariants(walletIds: readonly string[]): Promise<void> {
    const db = current().service.db.kysely;
    const now = clock.now().toISOString();
    for (const id of walletIds) {
      const shown = (await client.request('GET', `/v1/wallets/${id}`)).json<Wallet>();
      const entries = await sql<{
        total: number | string | null;
      }>`select sum(amount) as total from ledger_entries where account_id = ${id}`.execute(db);
      const grants = await db.selectFrom('wallet_grants').selectAll().where('wallet_id', '=', id).execute();
      const holds = await db.selectFrom('wallet_holds').selectAll().where('wallet_id', '=', id).where('status', '=', 'pending').execute();
      const row = await db
        .selectFrom('wallets')
        .select(['balance', 'held', 'debt', 'credit_limit'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(Number(entries.rows[0]?.total ?? 0), 'balance = Σ entries').toBe(row.balance);
      expect(grants.reduce((sum, grant) => sum + grant.remaining, 0) - row.debt, 'Σ grants.remaining − debt = balance').toBe(row.balance);
      expect(row.debt >= 0 && row.debt <= row.credit_limit, `0 ≤ debt ${row.debt} ≤ credit_limit ${row.credit_limit}`).toBe(true);
      expect(
        holds.reduce((sum, hold) => sum + hold.amount, 0),
        'held = Σ pending holds',
      ).toBe(row.held);
      const live = holds.filter((hold) => hold.expires_at > now);
      const liveReserved = new Map<string, number>();
      for (const hold of live) {
        for (const source of JSON.parse(hold.sources) as { grant_id: string; amount: number }[]) {
          liveReserved.set(source.grant_id, (liveReserved.get(source.grant_id) ?? 0) + source.amount);
        }
      }
      const expiredFree = grants
        .filter((grant) => grant.expires_at !== null && grant.expires_at <= now)
        .reduce((sum, grant) => sum + grant.remaining - (liveReserved.get(grant.id) ?? 0), 0);
      const pending = live.reduce((sum, hold) => sum + hold.amount, 0);
      expect(shown.balance).toBe(row.balance);
      expect(shown.available, 'available = balance − pending holds − expired credits not yet removed').toBe(
        row.balance - pending - expiredFree,
      );
      expect(shown.available).toBeGreaterThanOrEqual(-row.credit_limit);
      expect(shown.debt).toBe(row.debt);
      if (expiredFree === 0) expect(shown.available).toBe(shown.balance - pending);
    }
  }

  /** No debit, transfer or hold drew on a grant at or after its expiry; every expiry came at or after it. */
  async function checkNothingSpentAfterExpiry(walletIds: readonly string[]): Promise<void> {
    const db = current().service.db.kysely;
    const grants = new Map(
      (await db.selectFrom('wallet_grants').selectAll().where('wallet_id', 'in', walletIds).execute()).map((g) => [g.id, g]),
    );
    const holds = await db.selectFrom('wallet_holds').selectAll().where('wallet_id', 'in', walletIds).execute();
    const captureTimes = new Map(
      holds.filter((hold) => hold.transaction_id !== null).map((hold) => [hold.transaction_id, hold.created_at]),
    );
    const drawn: { at: string; sources: string | null; expiry: boolean }[] = [
      ...(
        await db
          .selectFrom('ledger_transactions')
          .select(['id', 'type', 'created_at', 'sources'])
          .where((eb) => eb.or([eb('wallet_id', 'in', walletIds), eb('from_wallet_id', 'in', walletIds)]))
          .where('type', 'in', ['debit', 'transfer', 'expiry'])
          .execute()
      ).map((row) => ({ at: captureTimes.get(row.id) ?? row.created_at, sources: row.sources, expiry: row.type === 'expiry' })),
      ...holds.map((hold) => ({ at: hold.created_at, sources: hold.sources, expiry: false })),
    ];
    for (const movement of drawn) {
      for (const source of JSON.parse(movement.sources ?? '[]') as { grant_id: string }[]) {
        const expiresAt = grants.get(source.grant_id)?.expires_at ?? null;
        if (movement.expiry) expect(expiresAt !== null && expiresAt <= movement.at, 'an expiry comes at or after expires_at').toBe(true);
        else expect(expiresAt === null || expiresAt > movement.at, `drawn on grant ${source.grant_id} after it expired`).toBe(true);
      }
    }
  }

  it('random interleavings keep balance = Σ entries = Σ grants − debt, available = balance − pending holds ≥ −credit_limit, and spend no expired credit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), creditLimits, async (steps, limits) => {
        const walletIds: string[] = [];
        for (const limit of limits) walletIds.push((await client.createWallet({ credit_limit: limit })).id);
        const holdIds: string[] = [];
        const id = (index: number) => walletIds[index] ?? '';
        for (const next of steps) {
          let status = 200;
          const post = async (url: string, body?: Record<string, unknown>) => {
            const response = await client.request('POST', url, body);
            status = response.statusCode;
            return response;
          };
          const expiresAt = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString();
          switch (next.kind) {
            case 'credit':
              await post(`/v1/wallets/${id(next.wallet)}/credits`, {
                amount: next.amount,
                ...(next.priority === null ? {} : { priority: next.priority }),
                ...(next.expiresInSeconds === null ? {} : { expires_at: expiresAt(next.expiresInSeconds) }),
              });
              break;
            case 'debit':
              await post(`/v1/wallets/${id(next.wallet)}/debits`, { amount: next.amount });
              break;
            case 'hold': {
              const response = await post(`/v1/wallets/${id(next.wallet)}/holds`, {
                amount: next.amount,
                expires_in: next.expiresInSeconds,
              });
              if (response.statusCode === 201) holdIds.push(response.json<Hold>().id);
              break;
            }
            case 'transfer':
              await post('/v1/wallets/transfer', { from_wallet_id: id(next.from), to_wallet_id: id(next.to), amount: next.amount });
              break;
            case 'capture':
            case 'void': {
              if (holdIds.length === 0) break;
              const holdId = holdIds[next.hold % holdIds.length] ?? '';
              await post(
                `/v1/holds/${holdId}/${next.kind}`,
                next.kind === 'capture' && next.amount !== null ? { amount: next.amount } : {},
              );
              break;
            }
            case 'advance':
              clock.advance(next.milliseconds);
              break;
            case 'settle':
              await settleExpired({ db: current().service.db, clock, ledger: current().service.ledger });
              break;
          }
          expect(ALLOWED.has(status), `${JSON.stringify(next)} answered ${status}`).toBe(true);
          await checkInvariants(walletIds);
        }
        await checkNothingSpentAfterExpiry(walletIds);
        const report = await verifyLedger(current().service.db, { projectId: current().projectId });
        expect(LEDGER_CHECKS.filter((check) => report.checks[check].violations > 0)).toEqual([]);
      }),
      { numRuns: 20 },
    );
  });
});

import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { AMOUNT_MAX, BALANCE_MAX } from '../wallets/wallets.schemas.js';
import { insertTransactions, walletRow } from './stats.fixtures.js';
import { foldStats } from './stats.fold.js';

const DAY_MS = 24 * 60 * 60 * 1000;

function daysAgo(days: number): string {
  return new Date(Date.now() - days * DAY_MS).toISOString();
}

// The statistics answer from maintained aggregates (per-day rows folded off the
// write path, counters kept by triggers), and stay exact whatever the fold has reached.
describeEachDialect('stats aggregates', (dialect) => {
  const test = useTestService(dialect);

  // A project per test: a fold ahead of the clock (below) moves every project's watermark.
  const project = async () => {
    const created = await test().service.projects.createProject({ name: 'Stats' });
    return { projectId: created.project.id, headers: { authorization: `Bearer ${created.secretKey}` } };
  };
  let headers: Record<string, string> = {};
  const get = async (url: string) => {
    const response = await test().service.app.inject({ method: 'GET', url, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ data: Record<string, unknown>[] } & Record<string, unknown>>();
  };

  it('answers the same before a fold, after it, after a second one and after concurrent ones', async () => {
    const { service } = test();
    const { projectId, headers: own } = await project();
    headers = own;
    const db = service.db.kysely;
    await insertTransactions(db, projectId, 'credit', [100, AMOUNT_MAX], daysAgo(3));
    await insertTransactions(db, projectId, 'debit', [30], daysAgo(3));
    await insertTransactions(db, projectId, 'credit', [7, 8], daysAgo(1));
    await insertTransactions(db, projectId, 'transfer', [5], daysAgo(1));
    await insertTransactions(db, projectId, 'credit', [1000], daysAgo(0));
    const overview = await get('/v1/stats/overview');
    const credits = await get('/v1/stats/credits?days=7');
    expect(overview).toMatchObject({ credits_in_circulation: 100 + AMOUNT_MAX - 30 + 7 + 8 + 1000 });
    expect(credits.data.at(-4)).toMatchObject({ added: 100 + AMOUNT_MAX, deducted: 30, credit_count: 2, debit_count: 1 });
    expect(credits.data.at(-2)).toMatchObject({ added: 15, credit_count: 2 });
    expect(credits.data.at(-1)).toMatchObject({ added: 1000, credit_count: 1 });

    expect(await foldStats(service.db, systemClock)).toBe(true);
    const folded = await db.selectFrom('stats_days').select(['day', 'source', 'n']).where('project_id', '=', projectId).execute();
    expect(folded.length).toBeGreaterThanOrEqual(3);
    const same = { ...overview, as_of: expect.any(String) };
    expect(await get('/v1/stats/overview')).toEqual(same);
    expect(await get('/v1/stats/credits?days=7')).toEqual(credits);

    await foldStats(service.db, systemClock);
    await Promise.all([foldStats(service.db, systemClock), foldStats(service.db, systemClock)]);
    expect(await get('/v1/stats/overview')).toEqual(same);
    expect(await get('/v1/stats/credits?days=7')).toEqual(credits);

    // Rows written after the fold are added by the read until the next fold takes them.
    await insertTransactions(db, projectId, 'debit', [1], daysAgo(0));
    expect(await get('/v1/stats/overview')).toMatchObject({ credits_in_circulation: (overview['credits_in_circulation'] as number) - 1 });
    // A fold a day ahead takes today's rows too (in service, the lag keeps it behind the clock).
    await foldStats(service.db, { now: () => new Date(Date.now() + DAY_MS) });
    expect(await get('/v1/stats/overview')).toMatchObject({ credits_in_circulation: (overview['credits_in_circulation'] as number) - 1 });
    expect((await get('/v1/stats/credits?days=1')).data).toEqual([
      { day: daysAgo(0).slice(0, 10), added: 1000, deducted: 1, credit_count: 1, debit_count: 1 },
    ]);
  });

  // Sums above 2^53 must not throw once folded either: the per-day rows keep their amounts as two
  // integers (stats.fold.ts), and wallet balances whose sum is above 2^53 are not summed by any read.
  it('answers sums above 2^53 - 1 capped and small differences exact, before and after a fold', async () => {
    const { service } = test();
    const { projectId, headers: own } = await project();
    headers = own;
    const db = service.db.kysely;
    const now = daysAgo(0);
    await db
      .insertInto('wallets')
      .values(['wal_big_a', 'wal_big_b'].map((id) => ({ ...walletRow(`${id}_${projectId}`, projectId, now), balance: BALANCE_MAX })))
      .execute();
    const count = Math.ceil(BALANCE_MAX / AMOUNT_MAX) + 1;
    await insertTransactions(db, projectId, 'credit', Array(count).fill(AMOUNT_MAX), daysAgo(2));
    const routes = ['/v1/stats/overview', '/v1/stats/credits?days=7', '/v1/stats/webhooks?days=7'];
    const capped = { day: daysAgo(2).slice(0, 10), added: BALANCE_MAX, deducted: 0, credit_count: count, debit_count: 0 };
    for (const fold of [false, true]) {
      // Folds the credits only: the debits below come after its watermark, as later rows do.
      if (fold) await foldStats(service.db, { now: () => new Date(Date.now() - 1.5 * DAY_MS) });
      const [overview, credits] = await Promise.all(routes.map(get));
      expect(overview).toMatchObject({ wallets: 2, credits_in_circulation: BALANCE_MAX });
      expect(credits?.data.at(-3)).toEqual(capped);
    }

    await insertTransactions(db, projectId, 'debit', [...Array(count - 1).fill(AMOUNT_MAX), AMOUNT_MAX - 7], daysAgo(1));
    for (const fold of [false, true]) {
      if (fold) await foldStats(service.db, systemClock);
      const [overview, credits] = await Promise.all(routes.map(get));
      expect(overview).toMatchObject({ credits_in_circulation: 7 });
      expect(credits?.data.at(-2)).toMatchObject({ added: 0, deducted: BALANCE_MAX, debit_count: count });
    }
  });

  it('folds webhook attempts and events per day with their counts, successes and latencies', async () => {
    const { service } = test();
    const { projectId, headers: own } = await project();
    headers = own;
    const db = service.db.kysely;
    const at = daysAgo(2);
    await sql`insert into events (id, project_id, type, data, idempotency_key, created_at, dispatched_at)
      values ('evt_fold_1', ${projectId}, 'user.created', '{}', 'k1', ${at}, ${at})`.execute(db);
    await sql`insert into webhook_endpoints (id, project_id, url, events, enabled, secret, created_at, updated_at)
      values ('whe_fold', ${projectId}, 'https://hooks.example.test/', '["*"]', 1, 'x', ${at}, ${at})`.execute(db);
    await sql`insert into webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempt_count, scheduled_attempt_count, created_at, updated_at)
      values ('whd_fold', ${projectId}, 'whe_fold', 'evt_fold_1', 'user.created', 'succeeded', 3, 3, ${at}, ${at})`.execute(db);
    const attempts: [number, number | null, number, string][] = [
      [1, 500, 40, at],
      [2, 200, 20, at],
      [3, null, 900, daysAgo(0)],
    ];
    for (const [number, status, latency, createdAt] of attempts) {
      await sql`insert into webhook_attempts (delivery_id, attempt_number, project_id, kind, created_at, status_code, latency_ms)
        values ('whd_fold', ${number}, ${projectId}, 'scheduled', ${createdAt}, ${status}, ${latency})`.execute(db);
    }
    const before = await get('/v1/stats/webhooks?days=3');
    expect(before.data[0]).toMatchObject({ attempts: 2, succeeded: 1, success_rate: 0.5, latency_ms_avg: 30, latency_ms_max: 40 });
    expect(before.data[2]).toMatchObject({ attempts: 1, succeeded: 0, success_rate: 0, latency_ms_avg: 900, latency_ms_max: 900 });
    const eventsToday = (await get('/v1/stats/overview'))['events_today'];

    await foldStats(service.db, systemClock);
    expect(await get('/v1/stats/webhooks?days=3')).toEqual(before);
    await foldStats(service.db, { now: () => new Date(Date.now() + DAY_MS) });
    expect(await get('/v1/stats/webhooks?days=3')).toEqual(before);
    expect((await get('/v1/stats/overview'))['events_today']).toBe(eventsToday);
  });

  it('counts users and wallets from counters kept on every insert and delete, per project', async () => {
    const { service } = test();
    const { app } = service;
    const { projectId, headers: own } = await project();
    headers = own;
    const ids: string[] = [];
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
      const created = await app.inject({
        method: 'POST',
        url: '/v1/auth/signup',
        headers,
        payload: { email, password: 'correct horse battery staple' },
      });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json<{ user: { id: string } }>().user.id);
    }
    await service.db.kysely
      .insertInto('wallets')
      .values(['wal_x', 'wal_y'].map((id) => walletRow(id, projectId, daysAgo(0))))
      .execute();
    expect(await get('/v1/stats/overview')).toMatchObject({ users: 3, wallets: 2 });
    const deleted = await app.inject({ method: 'DELETE', url: `/v1/users/${ids[0] ?? ''}`, headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await get('/v1/stats/overview')).toMatchObject({ users: 2, wallets: 2 });

    const other = await service.projects.createProject({ name: 'Other' });
    const otherOverview = await app.inject({
      method: 'GET',
      url: '/v1/stats/overview',
      headers: { authorization: `Bearer ${other.secretKey}` },
    });
    expect(otherOverview.json()).toMatchObject({ users: 0, wallets: 0 });
  });
});

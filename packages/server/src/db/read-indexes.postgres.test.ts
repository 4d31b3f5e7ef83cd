import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import * as audit from '../modules/audit/audit.reads.js';
import * as events from '../modules/events/event-log.store.js';
import * as sessions from '../modules/sessions/sessions.store.js';
import { foldStats } from '../modules/stats/stats.fold.js';
import * as stats from '../modules/stats/stats.store.js';
import * as users from '../modules/users/users.store.js';
import { listHoldEntries } from '../modules/ledger/ledger.audit-holds.js';
import { ledgerAuditSource } from '../modules/ledger/ledger.audit.js';
import * as ledger from '../modules/ledger/ledger.store.js';
import * as wallets from '../modules/wallets/wallets.store.js';
import * as webhooks from '../modules/webhooks/webhooks.store.js';
import { systemClock } from '../lib/clock.js';
import { useTestService } from '../test/service.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/** The tables that grow with a project's traffic: no list or statistics read may scan them. */
const BIG_TABLES = new Set([
  'ledger_transactions',
  'ledger_entries',
  'webhook_attempts',
  'webhook_deliveries',
  'events',
  'audit_log',
  'sessions',
  'users',
  'wallets',
  'wallet_holds',
]);
const ROWS = 4000;

/** A Kysely that compiles for PostgreSQL and records each statement instead of running it. */
function recorder(): { db: Kysely<Database>; statements: CompiledQuery[] } {
  const statements: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: (query) => {
      statements.push(query);
      return Promise.resolve({ rows: [{}] }) as never;
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: () => Promise.resolve(),
    commitTransaction: () => Promise.resolve(),
    rollbackTransaction: () => Promise.resolve(),
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function seqScans(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Seq Scan' && BIG_TABLES.has(node['Relation Name'] ?? '') ? [node['Relation Name']!] : [];
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)];
}

function indexNames(node: PlanNode): string[] {
  return [...(node['Index Name'] === undefined ? [] : [node['Index Name']]), ...(node.Plans ?? []).flatMap(indexNames)];
}

/**
 * A filtered audit read must seek its own index: without one, the planner walks the project's log
 * newest first and filters, which is no sequential scan but reads the whole log when few rows match.
 */
const EXPECTED_INDEX: Readonly<Record<string, string>> = {
  'audit log ?action=': 'audit_log_project_action_idx',
  'audit log ?actor_id=': 'audit_log_project_actor_idx',
  'audit log ?actor_id=, money movements': 'ledger_transactions_project_actor_idx',
  'audit log ?resource_id=': 'audit_log_project_resource_id_idx',
  'audit log, holds': 'wallet_holds_project_created_idx',
  'audit log ?action=wallet.hold.voided': 'wallet_holds_project_updated_idx',
  'audit log ?resource_id=, holds': 'wallet_holds_wallet_created_idx',
  'stats credits per day': 'ledger_transactions_project_created_idx',
  'stats webhooks per day': 'webhook_attempts_project_created_idx',
  'wallet balance ?at=': 'ledger_entries_account_time_idx',
  "a session's balance: history of the oldest active wallet": 'ledger_entries_account_idx',
};

/**
 * Large tables (docs/performance.md): every list, statistics and audit-filter read answers from an
 * index. Regressions it names: `GET /v1/stats/webhooks` scanned `webhook_attempts` (it had only its
 * primary key), `GET /v1/stats/credits` scanned `ledger_transactions` (no (project_id, created_at)
 * index), and `GET /v1/audit-log?resource_id= | action= | actor_id=` walked the project's whole log
 * (migration 0016_read_indexes). The plans are PostgreSQL's own choice on analyzed tables holding
 * thousands of rows in each of four projects; nothing forces the planner.
 */
describe.skipIf(inject('postgresAdminUrl') === '')('list and statistics reads use an index (PostgreSQL)', () => {
  const current = useTestService('postgres');

  it('plans no sequential scan of a large table for any list, statistics or audit-filter query', async () => {
    const { service, projectId } = current();
    const db = service.db.kysely;
    const others = [];
    for (const name of ['Other 1', 'Other 2', 'Other 3']) others.push((await service.projects.createProject({ name })).project.id);
    // One row an hour from 2026-01-01 (about 167 days); a series reads its last 30 days.
    const since = '2026-05-16T00:00:00.000Z';
    for (const project of [projectId, ...others]) {
      const p = sql.lit(project);
      const ts = sql`to_char(timestamp '2026-01-01' + n * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
      await sql`insert into users (id, project_id, email, email_key, name, roles, metadata, created_at, updated_at)
        select ${p} || '-u' || n, ${p}, 'u' || n || '@x.test', 'u' || n || '@x.test', 'U', '[]', '{}', ${ts}, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into sessions (id, project_id, user_id, token_hash, refresh_token_hash, refresh_expires_at, chain_id, expires_at, created_at, last_used_at)
        select ${p} || '-s' || n, ${p}, ${p} || '-u' || (n % 100 + 1), ${p} || '-th' || n, ${p} || '-rh' || n, '2027-01-01T00:00:00.000Z', ${p} || '-c' || n, '2027-01-01T00:00:00.000Z', ${ts}, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into wallets (id, project_id, user_id, currency, balance, status, metadata, created_at, updated_at)
        select ${p} || '-w' || n, ${p}, ${p} || '-u' || n, 'USD', n, 'active', '{}', ${ts}, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at, actor_type, actor_id)
        select ${p} || '-t' || n, ${p}, case when n % 2 = 0 then 'credit' else 'debit' end, 'USD', n, '{}', '', ${p} || '-w' || (n % 10 + 1), ${ts},
          'secret_key', 'key' || (n % 10)
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
        select ${p}, ${p} || '-t' || n, ${p} || '-w' || (n % 10 + 1), n, n, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into events (id, project_id, type, data, idempotency_key, created_at, dispatched_at)
        select ${p} || '-e' || n, ${p}, case when n % 3 = 0 then 'wallet.credited' else 'user.created' end, '{}', ${p} || '-k' || n, ${ts}, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into webhook_endpoints (id, project_id, url, events, enabled, secret, created_at, updated_at)
        select ${p} || '-h' || n, ${p}, 'https://hooks.example.test/' || n, '["*"]', 1, 'x', ${ts}, ${ts}
        from generate_series(1, 4) n`.execute(db);
      await sql`insert into webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempt_count, scheduled_attempt_count, created_at, updated_at)
        select ${p} || '-d' || n, ${p}, ${p} || '-h' || (n % 4 + 1), ${p} || '-e' || n, 'user.created', case when n % 5 = 0 then 'failed' else 'succeeded' end, 1, 1, ${ts}, ${ts}
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into webhook_attempts (delivery_id, attempt_number, project_id, kind, created_at, status_code, latency_ms)
        select ${p} || '-d' || n, 1, ${p}, 'scheduled', ${ts}, 200, n % 900
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into wallet_holds (id, project_id, wallet_id, amount, captured_amount, status, sources, metadata, idempotency_scope,
                                          expires_at, created_at, updated_at, actor_type, actor_id)
        select ${p} || '-hl' || n, ${p}, ${p} || '-w' || (n % 10 + 1), n, 0,
          (array['pending', 'captured', 'voided', 'expired'])[n % 4 + 1], '[]', '{}', ${p} || '-w' || (n % 10 + 1), ${ts}, ${ts}, ${ts},
          'secret_key', 'key' || (n % 10)
        from generate_series(1, ${ROWS}) n`.execute(db);
      await sql`insert into audit_log (id, project_id, created_at, action, actor_type, actor_id, resource_type, resource_id, outcome, changes)
        select ${p} || '-a' || n, ${p}, ${ts}, 'action.' || (n % 20), 'api_key', 'key' || (n % 10), 'wallet', ${p} || '-w' || n, 'success', '{}'
        from generate_series(1, ${ROWS}) n`.execute(db);
    }
    // As the stats job would have: the folds reach the clock less their lag.
    expect(await foldStats(service.db, systemClock, { stepMs: 365 * 24 * 3600 * 1000 })).toBe(true);
    // As autovacuum would: statistics, and a visibility map for index-only scans.
    for (const table of BIG_TABLES) await sql`vacuum analyze ${sql.table(table)}`.execute(db);

    const page = { after: undefined, limit: 21 } as const;
    const auditFilter = { action: undefined, actorId: undefined, resourceId: undefined, since: undefined, until: undefined, ...page };
    const reads: Record<string, (rec: Kysely<Database>) => Promise<unknown>> = {
      // The stats reads map their rows after the statement ran; the recorder's row is empty.
      'stats overview: counts, credits in circulation, events today': (rec) =>
        stats
          .countsAndDays(rec, projectId, [
            { fold: 'ledger', sources: ['credit', 'debit', 'expiry'], since: '', whole: true },
            { fold: 'events', sources: ['event'], since: '2026-06-15T00:00:00.000Z', whole: true },
          ])
          .catch(() => []),
      'stats credits per day': (rec) => stats.daysSince(rec, projectId, 'ledger', ['credit', 'debit'], since).catch(() => []),
      'stats webhooks per day': (rec) => stats.daysSince(rec, projectId, 'webhook_attempts', ['webhook_attempt'], since).catch(() => []),
      'audit log': (rec) => audit.listEntries(rec, projectId, auditFilter),
      'audit log ?action=': (rec) => audit.listEntries(rec, projectId, { ...auditFilter, action: 'action.3' }),
      'audit log ?actor_id=': (rec) => audit.listEntries(rec, projectId, { ...auditFilter, actorId: 'key3' }),
      'audit log ?resource_id=': (rec) => audit.listEntries(rec, projectId, { ...auditFilter, resourceId: `${projectId}-w3` }),
      'audit log ?since=&until=': (rec) => audit.listEntries(rec, projectId, { ...auditFilter, since, until: '2026-05-17T00:00:00.000Z' }),
      events: (rec) => events.listEvents(rec, projectId, { type: undefined, ...page }),
      'events ?type=': (rec) => events.listEvents(rec, projectId, { type: 'wallet.credited', ...page }),
      'audit log export': (rec) => audit.exportPage(rec, projectId, { since: undefined, until: undefined, after: undefined, limit: 100 }),
      users: (rec) => users.listUsers(rec, projectId, { limit: 21 }),
      'users ?email=': (rec) => users.listUsers(rec, projectId, { emailKey: 'u3@x.test', limit: 21 }),
      "a user's sessions": (rec) =>
        sessions.listLiveSessions(rec, projectId, `${projectId}-u3`, { limit: 21, nowIso: '2026-11-25T00:00:00.000Z' }),
      wallets: (rec) => wallets.listWallets(rec, projectId, { userId: undefined, ...page }),
      'wallets ?user_id=': (rec) => wallets.listWallets(rec, projectId, { userId: `${projectId}-u3`, ...page }),
      'wallet history': (rec) => ledger.listWalletHistory(rec, projectId, `${projectId}-w3`, { beforeSeq: undefined, limit: 21 }),
      'audit log ?resource_id=, money movements': (rec) =>
        ledgerAuditSource({ kysely: rec, dialect: 'postgres' } as Db)
          .list(projectId, {
            resourceId: `${projectId}-w3`,
            limit: 21,
            action: undefined,
            actorId: undefined,
            since: undefined,
            until: undefined,
            after: undefined,
          })
          .catch(() => []),
      'audit log ?actor_id=, money movements': (rec) =>
        ledgerAuditSource({ kysely: rec, dialect: 'postgres' } as Db)
          .list(projectId, {
            resourceId: undefined,
            limit: 21,
            action: undefined,
            actorId: 'key3',
            since: undefined,
            until: undefined,
            after: undefined,
          })
          .catch(() => []),
      'audit log, holds': (rec) => listHoldEntries(rec, projectId, auditFilter).catch(() => []),
      'audit log ?action=wallet.hold.voided': (rec) =>
        listHoldEntries(rec, projectId, { ...auditFilter, action: 'wallet.hold.voided' }).catch(() => []),
      'audit log ?resource_id=, holds': (rec) =>
        listHoldEntries(rec, projectId, { ...auditFilter, resourceId: `${projectId}-w3` }).catch(() => []),
      "a session's balance: history of the oldest active wallet": (rec) =>
        ledger.recentOfOldestActiveWallet({ kysely: rec, dialect: 'postgres' } as Db, projectId, `${projectId}-u3`, 20),
      "a session's balance: the wallet": (rec) =>
        wallets.readOldestActiveWallet({ kysely: rec, dialect: 'postgres' } as Db, projectId, `${projectId}-u3`, since),
      'wallet balance': (rec) => wallets.readWallet({ kysely: rec, dialect: 'postgres' } as Db, projectId, `${projectId}-w3`, since),
      'wallet balance ?at=': (rec) =>
        ledger.findWalletBalanceAt(rec, projectId, `${projectId}-w3`, '2026-06-15T00:00:00.000Z').then(() => undefined),
      'webhook deliveries': (rec) => webhooks.listDeliveries(rec, projectId, `${projectId}-h1`, { status: undefined, ...page }),
      'webhook deliveries ?status=': (rec) => webhooks.listDeliveries(rec, projectId, `${projectId}-h1`, { status: 'failed', ...page }),
      'webhook attempts of a page of deliveries': (rec) => webhooks.findAttempts(rec, projectId, [`${projectId}-d1`, `${projectId}-d5`]),
    };
    const scans: Record<string, string[]> = {};
    const used: Record<string, string[]> = {};
    for (const [name, read] of Object.entries(reads)) {
      const { db: rec, statements } = recorder();
      await read(rec);
      expect(statements.length, name).toBeGreaterThan(0);
      for (const statement of statements) {
        const result = await db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          CompiledQuery.raw(`explain (format json) ${statement.sql}`, [...statement.parameters]),
        );
        const plan = result.rows[0]!['QUERY PLAN'][0]!.Plan;
        const found = seqScans(plan);
        if (found.length > 0) scans[name] = found;
        used[name] = [...(used[name] ?? []), ...indexNames(plan)];
      }
    }
    expect(scans).toEqual({});
    for (const [name, index] of Object.entries(EXPECTED_INDEX)) expect(used[name], name).toContain(index);
  }, 60_000);
});

// EXPLAIN for the list, statistics and audit reads (scenarios/scale.js): each read of the built
// service's stores is run against a Kysely that records its statements as it runs them, and each
// statement is explained with its parameters on the scale database.
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import * as audit from '../../packages/server/dist/modules/audit/audit.reads.js';
import * as events from '../../packages/server/dist/modules/events/event-log.store.js';
import * as sessions from '../../packages/server/dist/modules/sessions/sessions.store.js';
import * as stats from '../../packages/server/dist/modules/stats/stats.store.js';
import * as users from '../../packages/server/dist/modules/users/users.store.js';
import { ledgerAuditSource } from '../../packages/server/dist/modules/ledger/ledger.audit.js';
import * as ledger from '../../packages/server/dist/modules/ledger/ledger.store.js';
import * as wallets from '../../packages/server/dist/modules/wallets/wallets.store.js';
import * as webhooks from '../../packages/server/dist/modules/webhooks/webhooks.store.js';

function recorder(pool) {
  const statements = [];
  // Each statement also runs (they are all reads), so a read that uses what an earlier statement
  // returned (the statistics reads' watermarks) is explained with the values the service would have.
  const connection = {
    executeQuery: async (query) => {
      statements.push(query);
      const result = await pool.query(query.sql, [...query.parameters]);
      return { rows: result.rows };
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  const driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: async () => undefined,
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const db = new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

/** The reads behind the measured routes, for project `p` (its wallet `w`, user `u`, endpoint `h`). */
export function reads({ p, w, u, h, d, since, today }) {
  const page = { after: undefined, limit: 21 };
  const auditFilter = { action: undefined, actorId: undefined, resourceId: undefined, since: undefined, until: undefined, ...page };
  return {
    'stats overview: counts, credits in circulation, events today': (db) =>
      stats.countsAndDays(db, p, [
        { fold: 'ledger', sources: ['credit', 'debit', 'expiry'], since: '', whole: true },
        { fold: 'events', sources: ['event'], since: today, whole: true },
      ]),
    'stats credits per day': (db) => stats.daysSince(db, p, 'ledger', ['credit', 'debit'], since),
    'stats webhooks per day': (db) => stats.daysSince(db, p, 'webhook_attempts', ['webhook_attempt'], since),
    'audit log': (db) => audit.listEntries(db, p, auditFilter),
    'audit log ?action=': (db) => audit.listEntries(db, p, { ...auditFilter, action: 'organization.update' }),
    'audit log ?actor_id=': (db) => audit.listEntries(db, p, { ...auditFilter, actorId: 'key3' }),
    'audit log ?resource_id=': (db) => audit.listEntries(db, p, { ...auditFilter, resourceId: w }),
    // The audit log's money movements are read from the ledger (docs/adr/0019-audit-reads-the-ledger.md),
    // beside audit_log, with their links of the chain.
    'audit log: movements': (db) => movements(db).list(p, auditFilter),
    'audit log ?actor_id=: movements': (db) => movements(db).list(p, { ...auditFilter, actorId: 'key3' }),
    'audit log ?resource_id=: movements': (db) => movements(db).list(p, { ...auditFilter, resourceId: w }),
    'audit log: links of a page of movements': (db) =>
      audit.linksOf(
        db,
        'postgres',
        p,
        Array.from({ length: 21 }, (_, index) => `aud_s${index + 1}`),
      ),
    events: (db) => events.listEvents(db, p, { type: undefined, ...page }),
    'events ?type=': (db) => events.listEvents(db, p, { type: 'wallet.credit.added', ...page }),
    users: (db) => users.listUsers(db, p, { limit: 21 }),
    'role deletion: a page of users': (db) => users.findUserRolesPage(db, p, { after: undefined, limit: 500 }),
    'role deletion: a later page': (db) => users.findUserRolesPage(db, p, { after: { createdAt: since, id: u }, limit: 500 }),
    "a user's sessions": (db) => sessions.listLiveSessions(db, p, u, { limit: 21, nowIso: new Date().toISOString() }),
    wallets: (db) => wallets.listWallets(db, p, { userId: undefined, ...page }),
    'wallet history': (db) => ledger.listWalletHistory(db, p, w, { beforeSeq: undefined, limit: 21 }),
    'webhook deliveries': (db) => webhooks.listDeliveries(db, p, h, { status: undefined, ...page }),
    'webhook attempts of a page of deliveries': (db) => webhooks.findAttempts(db, p, [d]),
  };
}

function movements(db) {
  return ledgerAuditSource({ kysely: db, dialect: 'postgres' });
}

function walk(node, visit) {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

/**
 * Each read's statements explained (ANALYZE, so the times are real) on `pool`; a Seq Scan of a
 * table holding more than `bigRows` rows is flagged.
 */
export async function explainReads(pool, readList, bigTables) {
  const out = [];
  for (const [name, read] of Object.entries(readList)) {
    const { db, statements } = recorder(pool);
    await read(db).catch(() => undefined);
    for (const statement of statements) {
      const result = await pool.query(`explain (analyze, format json) ${statement.sql}`, [...statement.parameters]);
      const plan = result.rows[0]['QUERY PLAN'][0];
      const tables = new Set();
      const seqScans = [];
      const indexes = [];
      walk(plan.Plan, (node) => {
        if (node['Relation Name'] !== undefined) tables.add(node['Relation Name']);
        if (node['Node Type'] === 'Seq Scan' && bigTables.has(node['Relation Name'])) seqScans.push(node['Relation Name']);
        if (node['Index Name'] !== undefined) indexes.push(node['Index Name']);
      });
      const big = [...tables].filter((table) => bigTables.has(table));
      if (big.length === 0) continue;
      const text = await pool.query(`explain ${statement.sql}`, [...statement.parameters]);
      out.push({
        read: name,
        tables: big,
        indexes,
        seq_scans: seqScans,
        execution_ms: plan['Execution Time'],
        plan: text.rows.map((row) => row['QUERY PLAN']).join('\n'),
      });
    }
  }
  return out;
}

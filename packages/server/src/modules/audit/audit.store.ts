import { CompiledQuery, type Kysely, sql } from 'kysely';
import { assert } from '../../lib/assert.js';
import { type Dialect, PREPARED_STATEMENT, type SqliteStatements } from '../../db/database.js';
import { keysIn } from '../../db/list-statements.js';
import type { AuditChainTable, AuditLogTable, Database } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type AuditRow = AuditLogTable;
/** An entry with its link of the chain, when sealed. */
export type AuditRowWithLink = AuditRow & { hash: string | null; prev_hash: string | null };
export type ChainLink = AuditChainTable;

/** The columns of an entry, as `a.*` names. */
export const ENTRY_COLUMNS = [
  'a.id',
  'a.project_id',
  'a.created_at',
  'a.action',
  'a.actor_type',
  'a.actor_id',
  'a.actor_user_id',
  'a.resource_type',
  'a.resource_id',
  'a.request_id',
  'a.ip',
  'a.user_agent',
  'a.outcome',
  'a.changes',
] as const;

/**
 * PostgreSQL: appends entries in the caller's transaction; `txid` takes its default, the
 * transaction's id, by which the sealer finds and orders them. One of the two writes to
 * `audit_log` outside the retention job (docs/adr/0007-audit-log.md).
 */
export async function insertEntries(trx: Executor, rows: readonly AuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('audit_log').values(rows).execute();
}

/**
 * SQLite: appends one entry and its link of the chain, in the transaction open on the connection.
 * The other write to `audit_log`. Fixed texts run synchronously (`Db.sqlite`): they ride in every
 * audited credit.
 */
export function insertChainedEntry(sqlite: SqliteStatements, row: AuditRow, link: ChainLink): void {
  insertUnchainedEntry(sqlite, row);
  sqlite.run(INSERT_LINK_SQL, [link.project_id, link.seq, link.entry_id, link.prev_hash, link.hash, link.sealed_at]);
}

/**
 * SQLite: the entry's row alone, without its link. Only `insertChainedEntry` and the benchmark's
 * floor (bench/floor-server.js, which measures the entry without its chain) call it: an entry
 * written by the service is always chained in the same transaction.
 */
export function insertUnchainedEntry(sqlite: SqliteStatements, row: AuditRow): void {
  sqlite.run(INSERT_ENTRY_SQL, [...columnValues(row), row.changes]);
}

/** An entry's columns but `changes`, in the order the insert names them and the chain hashes them. */
export function columnValues(row: AuditRow): (string | null)[] {
  return [
    row.id,
    row.project_id,
    row.created_at,
    row.action,
    row.actor_type,
    row.actor_id,
    row.actor_user_id,
    row.resource_type,
    row.resource_id,
    row.request_id,
    row.ip,
    row.user_agent,
    row.outcome,
  ];
}

const INSERT_ENTRY_SQL =
  'insert into audit_log (id, project_id, created_at, action, actor_type, actor_id, actor_user_id, resource_type, resource_id, ' +
  'request_id, ip, user_agent, outcome, changes) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const INSERT_LINK_SQL = 'insert into audit_chain (project_id, seq, entry_id, prev_hash, hash, sealed_at) values (?, ?, ?, ?, ?, ?)';

/** Projects with entries waiting to be sealed (across projects: the sealer serves them all). */
export async function projectsWithUnsealed(db: Executor, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('audit_unsealed').select('project_id').distinct().limit(limit).execute();
  return rows.map((row) => row.project_id);
}

/**
 * The oldest queued entries of a project, in queue order; `entry` is undefined when its row is
 * gone, `ordered` true when the entry has a transaction id (PostgreSQL since migration 0013; the
 * pending sealer chains it, in that order).
 */
export async function unsealedEntries(
  trx: Executor,
  projectId: string,
  limit: number,
): Promise<{ queueSeq: number; entryId: string; entry: AuditRow | undefined; ordered: boolean }[]> {
  const rows = await trx
    .selectFrom('audit_unsealed as u')
    .leftJoin('audit_log as a', (join) => join.onRef('a.id', '=', 'u.entry_id').onRef('a.project_id', '=', 'u.project_id'))
    .select([
      'u.seq as queue_seq',
      'u.entry_id as queued_entry_id',
      sql<boolean | 0 | 1>`a.txid is not null`.as('ordered'),
      ...ENTRY_COLUMNS,
    ])
    .where('u.project_id', '=', projectId)
    .orderBy('u.seq')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const { queue_seq: queueSeq, queued_entry_id: entryId, ordered, ...entry } = row;
    return { queueSeq, entryId, entry: entry.id === null ? undefined : (entry as AuditRow), ordered: ordered === true || ordered === 1 };
  });
}

export async function deleteUnsealed(trx: Executor, projectId: string, queueSeqs: readonly number[], dialect: Dialect): Promise<void> {
  if (queueSeqs.length === 0) return;
  if (dialect === 'postgres') {
    await trx.executeQuery(CompiledQuery.raw(PG_DELETE_UNSEALED_SQL, [projectId, queueSeqs]));
    return;
  }
  await trx.deleteFrom('audit_unsealed').where('project_id', '=', projectId).where('seq', 'in', queueSeqs).execute();
}

// PostgreSQL: a sealing batch's writes as arrays, in fixed prepared texts, instead of a statement of
// up to 6,000 parameters that is built, parsed and planned anew for every batch.
const PG_DELETE_UNSEALED_SQL = `${PREPARED_STATEMENT} delete from audit_unsealed where project_id = $1 and seq = any($2::bigint[])`;
const PG_INSERT_LINKS_SQL =
  `${PREPARED_STATEMENT} insert into audit_chain (project_id, seq, entry_id, prev_hash, hash, sealed_at) ` +
  'select project_id, seq, entry_id, prev_hash, hash, $1 ' +
  'from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[]) as link(project_id, seq, entry_id, prev_hash, hash)';

/** SQLite: the head of the chain, or else the checkpoint, for the write path (`insertChainedEntry`). */
export function sqliteChainHead(sqlite: SqliteStatements, projectId: string): Pick<ChainLink, 'seq' | 'hash'> | undefined {
  return (sqlite.get(SQLITE_CHAIN_HEAD_SQL, [projectId]) ?? sqlite.get(SQLITE_CHECKPOINT_SQL, [projectId])) as
    Pick<ChainLink, 'seq' | 'hash'> | undefined;
}

const SQLITE_CHAIN_HEAD_SQL = 'select seq, hash from audit_chain where project_id = ? order by seq desc limit 1';
const SQLITE_CHECKPOINT_SQL = 'select seq, hash from audit_checkpoints where project_id = ?';

/**
 * PostgreSQL: the sealing cursor, locked until the caller's transaction ends (sealers take turns),
 * and the oldest transaction id still running. Every transaction below it has ended, so every
 * entry it wrote is visible to the caller's next statement: none can commit behind the cursor.
 * (The snapshot is the statement's, taken before any wait for the lock: an older, lower bound,
 * which only seals less.)
 */
export async function lockSealCursor(trx: Executor): Promise<SealCursor> {
  const { rows } = await trx.executeQuery<{ txid: number; entry_id: string; running: string }>(CompiledQuery.raw(PG_LOCK_CURSOR_SQL, []));
  const row = rows[0];
  assert(row !== undefined, 'migration 0013 creates the audit seal cursor row');
  return { txid: row.txid, entryId: row.entry_id, running: Number(row.running) };
}

export interface SealCursor {
  /** The last entry sealed, in (txid, id) order. */
  readonly txid: number;
  readonly entryId: string;
  /** The oldest transaction id still running (`pg_snapshot_xmin`): entries of older ones may be sealed. */
  readonly running: number;
}

/**
 * PostgreSQL: entries after the cursor whose transaction has ended, in (txid, id) order, the
 * chain's order. (An entry a version before migration 0013 also queued in `audit_unsealed` is
 * chained here alone: the queue's sealer only drops its queue row.)
 */
export async function pendingEntries(trx: Executor, cursor: SealCursor, limit: number): Promise<(AuditRow & { txid: number })[]> {
  const { rows } = await trx.executeQuery<AuditRow & { txid: number }>(
    CompiledQuery.raw(PG_PENDING_ENTRIES_SQL, [cursor.txid, cursor.entryId, cursor.running, limit]),
  );
  return rows;
}

export async function moveSealCursor(trx: Executor, to: { readonly txid: number; readonly entryId: string }): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(PG_MOVE_CURSOR_SQL, [to.txid, to.entryId]));
}

/**
 * PostgreSQL: a new transaction id, taken by this statement's own transaction, which ends at once.
 * Every transaction that had written anything before the call has a smaller one. (Not
 * `pg_snapshot_xmax`: that is one past the last *completed* id, and a running transaction may
 * hold it.)
 */
export async function newTransactionId(db: Executor): Promise<number> {
  const { rows } = await db.executeQuery<{ txid: string }>(CompiledQuery.raw(PG_NEW_TRANSACTION_ID_SQL, []));
  return Number(rows[0]?.txid);
}

const PG_NEW_TRANSACTION_ID_SQL = `${PREPARED_STATEMENT} select pg_current_xact_id()::text as txid`;

/** PostgreSQL: each project's chain head, or else its checkpoint; absent for a project with neither. */
export async function chainHeads(trx: Executor, projectIds: readonly string[]): Promise<Map<string, Pick<ChainLink, 'seq' | 'hash'>>> {
  const { rows } = await trx.executeQuery<{ project_id: string; seq: number | null; hash: string | null }>(
    CompiledQuery.raw(PG_CHAIN_HEADS_SQL, [projectIds]),
  );
  const heads = new Map<string, Pick<ChainLink, 'seq' | 'hash'>>();
  for (const row of rows) if (row.seq !== null && row.hash !== null) heads.set(row.project_id, { seq: row.seq, hash: row.hash });
  return heads;
}

/** The bigint text of the oldest running transaction id; converted in `lockSealCursor`. */
const PG_LOCK_CURSOR_SQL =
  `${PREPARED_STATEMENT} select txid, entry_id, pg_snapshot_xmin(pg_current_snapshot())::text as running ` +
  'from audit_seal_cursor where id = 1 for update';
// Walks `audit_log_txid_idx` from the cursor, in its order.
const PG_PENDING_ENTRIES_SQL =
  `${PREPARED_STATEMENT} select a.txid, ${ENTRY_COLUMNS.join(', ')} from audit_log a ` +
  'where (a.txid, a.id) > ($1, $2) and a.txid < $3 order by a.txid, a.id limit $4';
const PG_MOVE_CURSOR_SQL = `${PREPARED_STATEMENT} update audit_seal_cursor set txid = $1, entry_id = $2 where id = 1`;
const PG_CHAIN_HEADS_SQL =
  `${PREPARED_STATEMENT} select p.project_id, coalesce(c.seq, k.seq) as seq, coalesce(c.hash, k.hash) as hash ` +
  'from unnest($1::text[]) as p(project_id) ' +
  'left join lateral (select seq, hash from audit_chain where project_id = p.project_id order by seq desc limit 1) c on true ' +
  'left join audit_checkpoints k on k.project_id = p.project_id';

/** Links sealed at one time (one sealing batch). */
export async function insertLinks(trx: Executor, links: readonly ChainLink[], dialect: Dialect): Promise<void> {
  const first = links[0];
  if (first === undefined) return;
  assert(
    links.every((link) => link.sealed_at === first.sealed_at),
    'a sealing batch is sealed at one time',
  );
  if (dialect === 'postgres') {
    await trx.executeQuery(
      CompiledQuery.raw(PG_INSERT_LINKS_SQL, [
        first.sealed_at,
        links.map((link) => link.project_id),
        links.map((link) => link.seq),
        links.map((link) => link.entry_id),
        links.map((link) => link.prev_hash),
        links.map((link) => link.hash),
      ]),
    );
    return;
  }
  await trx.insertInto('audit_chain').values(links).execute();
}

export async function findCheckpoint(db: Executor, projectId: string): Promise<{ seq: number; hash: string } | undefined> {
  const row = await db.selectFrom('audit_checkpoints').select(['seq', 'hash']).where('project_id', '=', projectId).executeTakeFirst();
  return row === undefined ? undefined : { seq: row.seq, hash: row.hash };
}

/** Links after `afterSeq` in order, each with its entry (undefined when the entry row is gone). */
export async function linksWithEntries(
  db: Executor,
  projectId: string,
  afterSeq: number,
  limit: number,
): Promise<{ link: ChainLink; entry: AuditRow | undefined }[]> {
  const rows = await db
    .selectFrom('audit_chain as c')
    .leftJoin('audit_log as a', (join) => join.onRef('a.id', '=', 'c.entry_id').onRef('a.project_id', '=', 'c.project_id'))
    .select([
      'c.project_id as link_project_id',
      'c.seq as link_seq',
      'c.entry_id as link_entry_id',
      'c.prev_hash as link_prev_hash',
      'c.hash as link_hash',
      'c.sealed_at as link_sealed_at',
      ...ENTRY_COLUMNS,
    ])
    .where('c.project_id', '=', projectId)
    .where('c.seq', '>', afterSeq)
    .orderBy('c.seq')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const { link_project_id, link_seq, link_entry_id, link_prev_hash, link_hash, link_sealed_at, ...entry } = row;
    return {
      link: {
        project_id: link_project_id,
        seq: link_seq,
        entry_id: link_entry_id,
        prev_hash: link_prev_hash,
        hash: link_hash,
        sealed_at: link_sealed_at,
      },
      entry: entry.id === null ? undefined : (entry as AuditRow),
    };
  });
}

/**
 * An entry of the project that is neither chained nor waiting to be: not queued and, on
 * PostgreSQL, not after the sealing cursor. Written around the log.
 */
export async function findUnchainedEntry(db: Executor, projectId: string, dialect: Dialect): Promise<Pick<AuditRow, 'id'> | undefined> {
  return db
    .selectFrom('audit_log as a')
    .select('a.id')
    .where('a.project_id', '=', projectId)
    .where((eb) =>
      eb.and([
        eb.not(eb.exists(eb.selectFrom('audit_chain as c').select('c.seq').whereRef('c.entry_id', '=', 'a.id'))),
        eb.not(eb.exists(eb.selectFrom('audit_unsealed as u').select('u.seq').whereRef('u.entry_id', '=', 'a.id'))),
        ...(dialect === 'postgres'
          ? [sql<boolean>`not (a.txid is not null and (a.txid, a.id) > (select txid, entry_id from audit_seal_cursor where id = 1))`]
          : []),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
}

/** Projects that have a chain, for the retention job. */
export async function projectIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('projects').select('id').orderBy('id').execute()).map((row) => row.id);
}

/**
 * Retention: removes a whole prefix of a project's chain, links up to `lastSeq` and their entries,
 * and moves the checkpoint to that link. The only DELETE on `audit_log` (docs/adr/0007-audit-log.md).
 */
export async function removePrefix(
  trx: Executor,
  projectId: string,
  prefix: { readonly entryIds: readonly string[]; readonly lastSeq: number; readonly lastHash: string; readonly now: string },
): Promise<void> {
  if (prefix.entryIds.length > 0) {
    const keys = prefix.entryIds.map((id) => [projectId, id] as const);
    await trx
      .deleteFrom('audit_log')
      .where(keysIn(['project_id', 'id'], keys))
      .execute();
  }
  await trx.deleteFrom('audit_chain').where('project_id', '=', projectId).where('seq', '<=', prefix.lastSeq).execute();
  await trx
    .insertInto('audit_checkpoints')
    .values({ project_id: projectId, seq: prefix.lastSeq, hash: prefix.lastHash, updated_at: prefix.now })
    .onConflict((conflict) =>
      conflict.column('project_id').doUpdateSet({ seq: prefix.lastSeq, hash: prefix.lastHash, updated_at: prefix.now }),
    )
    .execute();
}

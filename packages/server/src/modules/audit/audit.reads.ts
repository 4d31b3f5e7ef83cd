import { CompiledQuery, type Kysely } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
import { executePrepared } from '../../db/fixed-query.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database } from '../../db/schema.js';
import { type AuditRowWithLink, type ChainLink, ENTRY_COLUMNS } from './audit.store.js';
import { selectByKeys } from '../../db/list-statements.js';

type Executor = Kysely<Database>;

/** The audit log's reads for its list, one entry and the export; the writes and the chain's reads are in audit.store.ts. */

/** The order of entries in the list and the export, and their cursor's columns. */
const ENTRY_KEYSET = ['a.created_at', 'a.id'] as const;

/** A project's entries with their links of the chain, from `since` (inclusive) until `until` (exclusive). */
function entriesOf(db: Executor, projectId: string, range: { readonly since?: string | undefined; readonly until?: string | undefined }) {
  let query = db
    .selectFrom('audit_log as a')
    .leftJoin('audit_chain as c', 'c.entry_id', 'a.id')
    .select([...ENTRY_COLUMNS, 'c.hash', 'c.prev_hash'])
    .where('a.project_id', '=', projectId);
  if (range.since !== undefined) query = query.where('a.created_at', '>=', range.since);
  if (range.until !== undefined) query = query.where('a.created_at', '<', range.until);
  return query;
}

export interface ListFilter {
  readonly action: string | undefined;
  readonly actorId: string | undefined;
  readonly resourceId: string | undefined;
  /** Inclusive. */
  readonly since: string | undefined;
  /** Exclusive. */
  readonly until: string | undefined;
  /** Rows after this one in newest-first order. */
  readonly after: KeysetCursor | undefined;
  readonly limit: number;
}

/** Newest first; ties in `created_at` broken by id, so the order is total and the cursor exact. */
export async function listEntries(db: Executor, projectId: string, filter: ListFilter): Promise<AuditRowWithLink[]> {
  let query = entriesOf(db, projectId, filter);
  if (filter.resourceId !== undefined) query = query.where('a.resource_id', '=', filter.resourceId);
  if (filter.action !== undefined) query = query.where('a.action', '=', filter.action);
  if (filter.actorId !== undefined) query = query.where('a.actor_id', '=', filter.actorId);
  const page = keysetPage(query, { after: filter.after, limit: filter.limit, columns: ENTRY_KEYSET });
  // Prepared only where PostgreSQL's generic plan was measured as good as a custom one: by
  // resource. Without that filter the generic plan took ten times as long at the scale bench's
  // size (docs/performance.md, "The audit log's reads prepared").
  return filter.resourceId !== undefined ? executePrepared(db, page) : page.execute();
}

export async function findEntry(db: Executor, projectId: string, entryId: string): Promise<AuditRowWithLink | undefined> {
  return entriesOf(db, projectId, {}).where('a.id', '=', entryId).executeTakeFirst();
}

export interface ExportFilter {
  readonly since: string | undefined;
  readonly until: string | undefined;
  /** Rows after this one in oldest-first order. */
  readonly after: KeysetCursor | undefined;
  readonly limit: number;
}

/** A page of the export: oldest first, after the cursor. */
export async function exportPage(db: Executor, projectId: string, filter: ExportFilter): Promise<AuditRowWithLink[]> {
  return keysetPage(entriesOf(db, projectId, filter), {
    after: filter.after,
    limit: filter.limit,
    order: 'oldest first',
    columns: ENTRY_KEYSET,
  }).execute();
}

const PG_LINKS_OF_SQL = `${PREPARED_STATEMENT} select entry_id, hash, prev_hash from audit_chain where project_id = $1 and entry_id = any($2::text[])`;

/** The links of entries that are not rows of `audit_log` (movements read from the ledger), by entry id. */
export async function linksOf(
  db: Executor,
  dialect: Dialect,
  projectId: string,
  entryIds: readonly string[],
): Promise<Map<string, Pick<ChainLink, 'hash' | 'prev_hash'>>> {
  const links = new Map<string, Pick<ChainLink, 'hash' | 'prev_hash'>>();
  if (entryIds.length === 0) return links;
  // PostgreSQL: one prepared text whatever the page's length (an `in` list would be one per length).
  const rows =
    dialect === 'postgres'
      ? (
          await db.executeQuery<Pick<ChainLink, 'entry_id' | 'hash' | 'prev_hash'>>(
            CompiledQuery.raw(PG_LINKS_OF_SQL, [projectId, [...entryIds]]),
          )
        ).rows
      : // `(project_id, entry_id) in (…)` reads through `audit_chain_entry_idx`; `project_id = ? and
        // entry_id in (…)` made SQLite read every link of the project through the primary key.
        await selectByKeys(
          db.selectFrom('audit_chain').select(['entry_id', 'hash', 'prev_hash']),
          ['project_id', 'entry_id'],
          entryIds.map((id) => [projectId, id] as const),
        );
  for (const row of rows) links.set(row.entry_id, { hash: row.hash, prev_hash: row.prev_hash });
  return links;
}

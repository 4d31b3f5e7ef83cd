import { type SelectQueryBuilder, sql, type StringReference } from 'kysely';
import { ApiError } from '../lib/errors.js';

/**
 * Keyset pagination, the one way the API pages a list. A list is ordered by its rows' creation time
 * and a unique key that breaks ties (a wallet's history by its entries' `seq`), so the order is total
 * and `starting_after` (the last row the client saw) marks an exact place in it, however many rows
 * are written meanwhile. A page reads one
 * row more than it shows: that row says whether another page follows (`has_more`) without a count.
 *
 * A service asks `startPage` for the page (404 `resource_missing`, `param: "starting_after"`, when the
 * cursor names no row of the list), its store reads `rowsToRead` rows with `keysetPage`, and
 * `listOf` (or `pageOf`) cuts them to the page.
 */

/** The default number of rows of a page, when the query names none. */
export const PAGE_LIMIT_DEFAULT = 20;

export interface PageQuery {
  readonly limit?: number | undefined;
  readonly starting_after?: string | undefined;
}

export interface CursorLookup<Cursor> {
  /** The row `starting_after` names, or undefined when the list has no such row. */
  readonly find: (id: string) => Promise<Cursor | undefined>;
  /** The message of the 404 answered when it has none. */
  readonly missing: (id: string) => string;
}

export interface PageStart<Cursor> {
  /** The row the page starts after, or undefined for the first page. */
  readonly after: Cursor | undefined;
  /** The rows the page shows. */
  readonly limit: number;
  /** The rows the store reads: one more than it shows, to tell whether another page follows. */
  readonly rowsToRead: number;
}

/** The cursor row `startingAfter` names, undefined without one; 404 `resource_missing` when the list has no such row. */
export async function findCursor<Cursor>(startingAfter: string | undefined, lookup: CursorLookup<Cursor>): Promise<Cursor | undefined> {
  if (startingAfter === undefined) return undefined;
  const cursor = await lookup.find(startingAfter);
  if (cursor === undefined) throw new ApiError('resource_missing', lookup.missing(startingAfter), { param: 'starting_after' });
  return cursor;
}

/** The page a list query asks for: its cursor row (see `findCursor`) and its size. */
export async function startPage<Cursor>(query: PageQuery, lookup: CursorLookup<Cursor>): Promise<PageStart<Cursor>> {
  const after = await findCursor(query.starting_after, lookup);
  const limit = query.limit ?? PAGE_LIMIT_DEFAULT;
  return { after, limit, rowsToRead: limit + 1 };
}

/** The page's rows of the `limit + 1` read, and whether another page follows them. */
export function pageOf<Row>(rows: readonly Row[], limit: number): { rows: Row[]; has_more: boolean } {
  return { rows: rows.slice(0, limit), has_more: rows.length > limit };
}

/** The list object of a page: its rows of the `limit + 1` read, each turned into its API object. */
export function listOf<Row, Item>(
  rows: readonly Row[],
  limit: number,
  toItem: (row: Row) => Item,
): { object: 'list'; data: Item[]; has_more: boolean } {
  const page = pageOf(rows, limit);
  return { object: 'list', data: page.rows.map(toItem), has_more: page.has_more };
}

/** The time and key of a row in its list's order: the cursor a page starts after. */
export interface KeysetCursor {
  readonly created_at: string;
  readonly id: string;
}

export interface KeysetPage<DB, TB extends keyof DB> {
  /** The row the page starts after; none for the first page. */
  readonly after?: KeysetCursor | undefined;
  /** The rows to read. */
  readonly limit: number;
  /** Newest first (the lists) unless oldest first (the exports and feeds). */
  readonly order?: 'newest first' | 'oldest first';
  /** The time and key columns; `created_at` and `id` unless named. */
  readonly columns?: readonly [time: StringReference<DB, TB>, key: StringReference<DB, TB>];
}

/** Rows strictly past the cursor in (time, key) order: `(time, key) < (…)` newest first, `>` oldest first. */
export function afterCursor<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: Pick<KeysetPage<DB, TB>, 'after' | 'order' | 'columns'>,
): SelectQueryBuilder<DB, TB, O> {
  const { after } = page;
  if (after === undefined) return query;
  const [time, key] = columnsOf(page);
  const comparison = page.order === 'oldest first' ? sql.raw('>') : sql.raw('<');
  return query.where(sql<boolean>`(${time}, ${key}) ${comparison} (${after.created_at}, ${after.id})`);
}

/** One page of `query` in (time, key) order, past the cursor: `limit` rows. */
export function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: KeysetPage<DB, TB>,
): SelectQueryBuilder<DB, TB, O> {
  const [time, key] = columnsOf(page);
  const direction = page.order === 'oldest first' ? 'asc' : 'desc';
  return afterCursor(query, page).orderBy(time, direction).orderBy(key, direction).limit(page.limit);
}

function columnsOf<DB, TB extends keyof DB>(page: Pick<KeysetPage<DB, TB>, 'columns'>) {
  const [time, key] = page.columns ?? ['created_at', 'id'];
  return [sql.ref(time), sql.ref(key)] as const;
}

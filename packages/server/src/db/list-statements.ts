import { type Insertable, type Kysely, type RawBuilder, type SelectQueryBuilder, type Simplify, sql, type StringReference } from 'kysely';
import type { Database } from './schema.js';

/**
 * Statements over whole lists, so that a batch of any size costs a fixed handful of statements: a
 * multi-row INSERT in chunks, a read of the rows matching any of a list of keys, and PostgreSQL's
 * `unnest` of one array per column (docs/adr/0005-ledger-write-path.md).
 */

/** Rows per multi-row INSERT, well below SQLite's limit of 32,766 parameters. */
const ROWS_PER_INSERT = 500;

/** Inserts the rows, `ROWS_PER_INSERT` to a statement: one statement for up to 500 rows. */
export async function insertInChunks<Table extends keyof Database>(
  db: Kysely<Database>,
  table: Table,
  rows: readonly Insertable<Database[Table]>[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await db
      .insertInto(table)
      .values(rows.slice(start, start + ROWS_PER_INSERT))
      .execute();
  }
}

/**
 * The rows of `query` whose `columns` equal one of `keys`, `(a, b) in ((?, ?), …)`, in one statement;
 * none, and no statement, for no keys.
 */
export async function selectByKeys<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: readonly StringReference<DB, TB>[],
  keys: readonly (readonly unknown[])[],
): Promise<Simplify<O>[]> {
  if (keys.length === 0) return [];
  return query.where(keysIn(columns, keys)).execute();
}

/**
 * `(a, b) in ((…), …)`: the condition of `selectByKeys`, for a statement of another kind (a DELETE).
 * Both dialects answer it from the primary key, where `project_id = ? and id in (…)` with a long
 * list can make SQLite choose an index on `project_id` and read every row of the project.
 * `keys` must not be empty.
 */
export function keysIn(columns: readonly string[], keys: readonly (readonly unknown[])[]): RawBuilder<boolean> {
  const tuple = sql.join(columns.map((column) => sql.ref(column)));
  const values = sql.join(keys.map((key) => sql`(${sql.join(key)})`));
  return sql<boolean>`(${tuple}) in (${values})`;
}

/** A PostgreSQL array's element type; `bigint` values are sent as their decimal text. */
type ArrayType = 'text' | 'int' | 'bigint';

/** One column of an `unnest`: its name, its array's element type, and its value in an item of the list. */
export type ArrayColumn<Item> = readonly [name: string, type: ArrayType, value: (item: Item) => string | number | null];

/** The columns' names, in their order: the target or alias list that matches `unnestArrays`. */
export function columnNames(columns: readonly ArrayColumn<never>[]): RawBuilder<unknown> {
  return sql.raw(columns.map(([name]) => name).join(', '));
}

/**
 * `unnest($1::text[], $2::bigint[], …)`: one array per column, in the columns' order, each the
 * column's value in every item. The text is the same for a list of any length, so it stays one
 * prepared statement.
 */
export function unnestArrays<Item>(items: readonly Item[], columns: readonly ArrayColumn<Item>[]): RawBuilder<unknown> {
  const arrays = columns.map(([, type, value]) => {
    const values = type === 'bigint' ? items.map((item) => bigintText(value(item))) : items.map(value);
    return sql`${values}::${sql.raw(type)}[]`;
  });
  return sql`unnest(${sql.join(arrays)})`;
}

function bigintText(value: string | number | null): string | null {
  return value === null ? null : String(value);
}

import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from './database.js';
import type { Database } from './schema.js';

/**
 * A read on a hot path as one fixed SQL text, written once with `?` placeholders: Kysely does not
 * build and compile it on every request, SQLite keeps it prepared (the statement cache in
 * database.ts), and PostgreSQL runs it as a named prepared statement (`PREPARED_STATEMENT`), planned
 * once per connection, unless DATABASE_PREPARED_STATEMENTS=false. Only for texts that name their columns and take every value as a parameter.
 */
export interface FixedQuery<Row> {
  readonly sqlite: string;
  readonly postgres: string;
  /** Phantom: the row type the text selects. */
  readonly row?: Row;
}

export function fixedQuery<Row>(text: string): FixedQuery<Row> {
  const normalized = text.replace(/\s+/g, ' ').trim();
  let index = 0;
  return {
    sqlite: normalized,
    postgres: `${PREPARED_STATEMENT} ${normalized.replace(/\?/g, () => `$${(index += 1)}`)}`,
  };
}

export async function runFixed<Row>(
  db: { readonly kysely: Kysely<Database>; readonly dialect: Dialect },
  query: FixedQuery<Row>,
  parameters: readonly unknown[],
): Promise<Row[]> {
  const text = db.dialect === 'postgres' ? query.postgres : query.sqlite;
  const result = await db.kysely.executeQuery<Row>(CompiledQuery.raw(text, [...parameters]));
  return result.rows;
}

export async function runFixedFirst<Row>(
  db: { readonly kysely: Kysely<Database>; readonly dialect: Dialect },
  query: FixedQuery<Row>,
  parameters: readonly unknown[],
): Promise<Row | undefined> {
  return (await runFixed(db, query, parameters))[0];
}

/**
 * A query built with Kysely's builder, run as a prepared statement (`PREPARED_STATEMENT`): for
 * reads whose text depends only on which filters are present, a handful of shapes, never on the
 * number of values (an `in` list of a page's ids is one text per length: use `= any($1)`). Kysely
 * still builds and compiles it; PostgreSQL parses and plans it once per connection and shape
 * instead of at every call (docs/performance.md, "The audit log's reads prepared").
 */
export async function executePrepared<Row>(db: Kysely<Database>, query: Compilable<Row>): Promise<Row[]> {
  const compiled = query.compile();
  return (await db.executeQuery<Row>({ ...compiled, sql: `${PREPARED_STATEMENT} ${compiled.sql}` })).rows;
}

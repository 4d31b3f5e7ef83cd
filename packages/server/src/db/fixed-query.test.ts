import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { describeEachDialect, useTestDatabase } from '../test/database.js';
import { openDatabase, PREPARED_STATEMENT } from './database.js';
import { fixedQuery, runFixed, runFixedFirst } from './fixed-query.js';

describe('fixedQuery', () => {
  it('keeps `?` for SQLite and numbers them for PostgreSQL, marked as a prepared statement', () => {
    const query = fixedQuery('select a\n  from t where b = ? and c = ?');
    expect(query.sqlite).toBe('select a from t where b = ? and c = ?');
    expect(query.postgres).toBe(`${PREPARED_STATEMENT} select a from t where b = $1 and c = $2`);
  });
});

describeEachDialect('runFixed', (dialect) => {
  const database = useTestDatabase(dialect);

  it('runs the same text again with other parameters and returns typed rows', async () => {
    const { url } = database();
    const db =
      dialect === 'sqlite'
        ? openDatabase({ dialect, file: url.slice('sqlite:'.length), synchronous: 'full' })
        : openDatabase({ dialect, url, poolSize: 2, preparedStatements: true });
    onTestFinished(() => db.destroy());
    await sql`create table fixed_query_probe (id text primary key, amount bigint not null)`.execute(db.kysely);
    await sql`insert into fixed_query_probe (id, amount) values ('a', 9007199254740991), ('b', 2)`.execute(db.kysely);
    const byId = fixedQuery<{ id: string; amount: number }>('select id, amount from fixed_query_probe where id = ?');
    expect(await runFixedFirst(db, byId, ['a'])).toEqual({ id: 'a', amount: 9_007_199_254_740_991 });
    expect(await runFixedFirst(db, byId, ['b'])).toEqual({ id: 'b', amount: 2 });
    expect(await runFixedFirst(db, byId, ['missing'])).toBeUndefined();
    const all = fixedQuery<{ id: string }>('select id from fixed_query_probe where amount >= ? order by id');
    expect(await runFixed(db, all, [1])).toEqual([{ id: 'a' }, { id: 'b' }]);
  });
});

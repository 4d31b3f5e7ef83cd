import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import type { Transaction } from '../../db/transaction.js';
import { newId } from '../../shared/ids.js';
import { GroupCommit } from './group-commit.js';

describe('GroupCommit (SQLite)', () => {
  let directory = '';
  let db: Db;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'svc-group-commit-'));
    db = openDatabase({ dialect: 'sqlite', file: join(directory, 'test.sqlite'), synchronous: 'normal' });
    await migrateToLatest(db);
  });

  afterAll(async () => {
    await db.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  const insertProject = (trx: Transaction, id: string) =>
    trx.insertInto('projects').values({ id, name: 'group commit', created_at: new Date().toISOString() }).execute();
  const exists = async (id: string) =>
    (await db.kysely.selectFrom('projects').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

  it('runs the writes that arrive together in one transaction, and rolls back only the one that throws', async () => {
    const groupCommit = new GroupCommit(db);
    const ids = [newId('prj'), newId('prj'), newId('prj')];
    const transactions = new Set<Transaction>();
    const refusal = new Error('refused');
    const outcomes = await Promise.allSettled(
      ids.map((id, index) =>
        groupCommit.run(async (trx) => {
          transactions.add(trx);
          await insertProject(trx, id);
          if (index === 1) throw refusal;
          return id;
        }),
      ),
    );
    expect(transactions.size).toBe(1);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: ids[0] },
      { status: 'rejected', reason: refusal },
      { status: 'fulfilled', value: ids[2] },
    ]);
    expect([await exists(ids[0]!), await exists(ids[1]!), await exists(ids[2]!)]).toEqual([true, false, true]);
  });

  it('tells each write its outcome only once the batch has committed', async () => {
    const groupCommit = new GroupCommit(db);
    const id = newId('prj');
    const seenCommitted: boolean[] = [];
    await Promise.all([
      groupCommit.run((trx) => insertProject(trx, id)).then(async () => seenCommitted.push(await exists(id))),
      groupCommit.run((trx) => insertProject(trx, newId('prj'))),
    ]);
    expect(seenCommitted).toEqual([true]);
  });

  it('fails every write of a batch whose commit fails', async () => {
    const groupCommit = new GroupCommit(db);
    const good = newId('prj');
    const outcomes = await Promise.allSettled([
      groupCommit.run((trx) => insertProject(trx, good)),
      groupCommit.run(async (trx) => {
        // A foreign key checked only at COMMIT: the whole batch's commit fails on it.
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await trx
          .insertInto('api_keys')
          .values({
            id: newId('key'),
            project_id: 'prj_missing',
            name: null,
            key_hash: newId('key'),
            prefix: 'x',
            last4: 'x',
            created_at: 'x',
            revoked_at: null,
          })
          .execute();
      }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await exists(good)).toBe(false);
    // The queue is not stuck: the next write commits.
    const next = newId('prj');
    await groupCommit.run((trx) => insertProject(trx, next));
    expect(await exists(next)).toBe(true);
  });
});

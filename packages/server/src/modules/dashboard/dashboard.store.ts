import type { Kysely } from 'kysely';
import type { DashboardSessionsTable, Database } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type DashboardSessionRow = DashboardSessionsTable;

export async function insertSession(db: Executor, row: DashboardSessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

/** Like the secret-key lookup, not scoped by project: the cookie is how a request finds its project. */
export async function findSessionByHash(db: Executor, tokenHash: string): Promise<DashboardSessionRow | undefined> {
  return db.selectFrom('dashboard_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function endSession(db: Executor, tokenHash: string, endedAt: string): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ ended_at: endedAt })
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .execute();
}

/** Deletes up to `limit` sessions that expired before `before`; returns how many. */
export async function deleteExpiredSessions(db: Executor, before: string, limit: number): Promise<number> {
  const victims = db.selectFrom('dashboard_sessions').select('token_hash').where('expires_at', '<', before).limit(limit);
  const result = await db.deleteFrom('dashboard_sessions').where('token_hash', 'in', victims).executeTakeFirst();
  return Number(result.numDeletedRows);
}

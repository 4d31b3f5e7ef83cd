import type { Kysely } from 'kysely';
import type { Database, OAuthProvidersTable, OAuthStatesTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type ProviderRow = OAuthProvidersTable;
export type StateRow = OAuthStatesTable;

export async function findProvider(db: Executor, projectId: string, provider: string): Promise<ProviderRow | undefined> {
  return db
    .selectFrom('oauth_providers')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}

export async function listProviders(db: Executor, projectId: string): Promise<ProviderRow[]> {
  return db.selectFrom('oauth_providers').selectAll().where('project_id', '=', projectId).orderBy('provider').execute();
}

export async function countProviders(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('oauth_providers')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * PostgreSQL only (SQLite has no row locks; its write transactions run one at a time): takes the
 * project's row lock, so that transactions adding providers to one project count them one after
 * the other, and none can pass the per-project limit on a count taken before another's insert
 * committed. `for no key update` conflicts with itself but not with the key-share lock that
 * inserting any row referencing the project takes, so the project's other writes are not held up.
 */
export async function lockProjectProviders(db: Executor, projectId: string): Promise<void> {
  await db.selectFrom('projects').select('id').where('id', '=', projectId).forNoKeyUpdate().executeTakeFirst();
}

/** Inserts or replaces a provider's configuration (`created_at` of an existing row is kept). */
export async function upsertProvider(db: Executor, row: ProviderRow): Promise<void> {
  const changes = {
    kind: row.kind,
    client_id: row.client_id,
    secret_sealed: row.secret_sealed,
    issuer: row.issuer,
    apple_team_id: row.apple_team_id,
    apple_key_id: row.apple_key_id,
    scopes: row.scopes,
    redirect_uris: row.redirect_uris,
    updated_at: row.updated_at,
  };
  await db
    .insertInto('oauth_providers')
    .values(row)
    .onConflict((conflict) => conflict.columns(['project_id', 'provider']).doUpdateSet(changes))
    .execute();
}

export async function deleteProvider(db: Executor, projectId: string, provider: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_providers')
    .where('project_id', '=', projectId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function insertState(db: Executor, row: StateRow): Promise<void> {
  await db.insertInto('oauth_states').values(row).execute();
}

export async function findState(db: Executor, projectId: string, stateHash: string): Promise<StateRow | undefined> {
  return db
    .selectFrom('oauth_states')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('state_hash', '=', stateHash)
    .executeTakeFirst();
}

/** Marks a state used; false when it was used already (by a request that got there first). */
export async function useState(db: Executor, projectId: string, stateHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_states')
    .set({ used_at: now })
    .where('project_id', '=', projectId)
    .where('state_hash', '=', stateHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes up to `limit` states that expired before `before`; returns how many went. */
export async function deleteExpiredStates(db: Executor, before: string, limit: number): Promise<number> {
  const doomed = db.selectFrom('oauth_states').select('state_hash').where('expires_at', '<', before).limit(limit);
  const result = await db.deleteFrom('oauth_states').where('state_hash', 'in', doomed).executeTakeFirst();
  return Number(result.numDeletedRows);
}

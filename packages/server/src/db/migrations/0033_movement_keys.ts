import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * One idempotency table (docs/adr/0004-idempotency.md): the ledger's movement keys become rows of
 * `idempotency_keys` under the scope `ledger:<scope>`, written in the movement's transaction like
 * every other key. Copied here: the keys of existing transactions and holds (what they answer is
 * rebuilt from the ledger, so the row names it; its fingerprint too is read from the transaction,
 * and the row keeps none), and the refusals kept in `ledger_refusals`, with their status. Nothing
 * writes `ledger_refusals` any more; it stays, and `ledger_transactions.idempotency_key` still names
 * the transaction a key made.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const jsonObject = postgres ? sql.raw('json_build_object') : sql.raw('json_object');
  await sql`insert into idempotency_keys (project_id, scope, key, request_hash, request_fields, state, lock_id, locked_until,
                                          response_status, response_body, created_at, expires_at)
    select project_id, 'ledger:' || idempotency_scope, idempotency_key, '', '{}', 'completed', null, null,
           201, '{"transaction_id":"' || id || '"}', created_at, null
    from ledger_transactions where idempotency_key is not null
    on conflict do nothing`.execute(db);
  await sql`insert into idempotency_keys (project_id, scope, key, request_hash, request_fields, state, lock_id, locked_until,
                                          response_status, response_body, created_at, expires_at)
    select project_id, 'ledger:' || idempotency_scope, idempotency_key, '', '{}', 'completed', null, null,
           201, '{"hold_id":"' || id || '"}', created_at, null
    from wallet_holds where idempotency_key is not null
    on conflict do nothing`.execute(db);
  // Every code a movement can be refused with is a 4xx of the catalog; all but these few are 422.
  await sql`insert into idempotency_keys (project_id, scope, key, request_hash, request_fields, state, lock_id, locked_until,
                                          response_status, response_body, created_at, expires_at)
    select project_id, 'ledger:' || idempotency_scope, idempotency_key, request_hash, request_fields, 'completed', null, null,
           case code when 'resource_missing' then 404 when 'wallet_frozen' then 409 when 'wallet_closed' then 409
                     when 'hold_not_pending' then 409 else 422 end,
           ${jsonObject}('code', code, 'message', message, 'param', param, 'request_id', request_id), created_at, null
    -- "where true": SQLite reads an ON CONFLICT right after a FROM as a join's clause.
    from ledger_refusals where true
    on conflict do nothing`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('scope', 'like', 'ledger:%').execute();
}

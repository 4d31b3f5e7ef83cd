import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { PREPARED_STATEMENT } from '../../db/database.js';
import { completedKeyRow, type IdempotencyClaim } from '../../http/idempotency.store.js';
import { assert } from '../../shared/assert.js';
import { auditEntryCtes, type StatementAuditContext } from '../audit/audit.postgres.js';
import type { AuditRow } from '../audit/audit.store.js';
import { type BalanceAfterChange, ISSUANCE_ACCOUNT_PREFIX } from './ledger.store.js';
import { BALANCE_MAX } from './wallets.schemas.js';
import type { WalletRow } from './wallets.store.js';

/**
 * JSON text with one number left open, filled in by the database once it is known: the text
 * before it and the text after it. The balance after a movement is only known inside the statement
 * that makes it, yet the stored response and the event must carry it.
 */
export interface JsonWithOpenNumber {
  readonly before: string;
  readonly after: string;
}

/** A marker no real value can produce: amounts and balances are never negative. */
const OPEN_NUMBER = -1;

/**
 * `JSON.stringify(value)` with `value[field]` left open. The field must be a top-level number; the
 * marker `"field":-1` cannot occur elsewhere, because every other value of these objects is a
 * string (whose quotes JSON escapes), null, or an object of strings.
 */
export function jsonWithOpenNumber<T extends object>(value: T, field: keyof T & string): JsonWithOpenNumber {
  const marker = `"${field}":${OPEN_NUMBER}`;
  const parts = JSON.stringify({ ...value, [field]: OPEN_NUMBER }).split(marker);
  assert(parts.length === 2, `the JSON of ${field} has exactly one place for it`);
  return { before: `${parts[0] ?? ''}"${field}":`, after: parts[1] ?? '' };
}

/**
 * The data of `wallet.balance.low` from the changed wallet row, as the exact text JSON.stringify
 * makes of `{wallet_id, balance, threshold, currency}` (ledger.events.ts): the webhook body embeds
 * the stored text as it is, so both dialects must store the same bytes. The currency needs no
 * escaping: it is three upper-case letters (checked when the wallet was created).
 */
function lowBalanceData(walletId: string, balanceColumn: 'balance' | 'balance_after' = 'balance') {
  return sql`${`{"wallet_id":${JSON.stringify(walletId)},"balance":`}::text || ${sql.raw(balanceColumn)}
    || ',"threshold":' || low_balance_threshold || ',"currency":"' || currency || '"}'`;
}

export interface OneStatementMovement {
  readonly projectId: string;
  readonly walletId: string;
  readonly transactionId: string;
  readonly type: 'credit' | 'debit';
  readonly amount: number;
  readonly description: string | null;
  readonly metadataJson: string;
  readonly createdAt: string;
  /** `wallet.credit.added` or `wallet.credit.deducted`, its data with the balance open. */
  readonly event: { readonly id: string; readonly type: string; readonly data: JsonWithOpenNumber };
  /** For debits: the id `wallet.balance.low` gets if this debit crosses the threshold. */
  readonly lowBalanceEventId: string | undefined;
  /** The request's key and the response to store with it, balance_after open. */
  readonly idempotency: { readonly claim: IdempotencyClaim; readonly response: JsonWithOpenNumber } | undefined;
  /** The movement's audit entry (`wallet.credit` or `wallet.debit`), or undefined when audit recording is off. */
  readonly audit: ({ readonly id: string } & StatementAuditContext) | undefined;
}

/**
 * The `changes` of a movement's audit entry with both balances open: the text before the balance
 * before, between the two, and after the balance after.
 */
function movementChangesParts(transactionId: string, amount: number): { before: string; between: string; after: string } {
  return {
    before: `{"transaction_id":${JSON.stringify(transactionId)},"amount":${amount},"balance_before":`,
    between: ',"balance_after":',
    after: '}',
  };
}

/**
 * A credit or debit on PostgreSQL as ONE statement: the conditional balance update, the
 * transaction, its two entries, its events and, with an idempotency key, the key with its stored
 * response, in data-modifying CTEs that all read the row the update returns. Every part happens or
 * none does (one statement is one transaction), and the wallet's row lock is held only while this
 * statement commits, so a hot wallet serves as many movements as commits allow. Round trips: one.
 * It runs as a prepared statement (`PREPARED_STATEMENT`): planning it anew each time cost more
 * than running it.
 *
 * Undefined when the update matched nothing (missing or inactive wallet, balance out of range, or
 * the key already stored): nothing was written; the caller finds out why.
 *
 * The key is claimed here, not before: the update runs only if the key is not stored yet, and the
 * key's row is inserted by a plain INSERT. A concurrent request with the same key (same wallet, as
 * credit and debit keys are per wallet) waits for this one's row lock; when this one committed,
 * its INSERT then fails on the key's primary key and its whole statement, balance change included,
 * is undone. So a key is applied at most once, and the loser finds the stored answer afterwards.
 */
export async function moveInOneStatement(db: Kysely<Database>, input: OneStatementMovement): Promise<BalanceAfterChange | undefined> {
  const delta = input.type === 'credit' ? input.amount : -input.amount;
  const balanceRule = delta < 0 ? sql`balance >= ${String(-delta)}::bigint` : sql`balance <= ${String(BALANCE_MAX - delta)}::bigint`;
  const idempotency = input.idempotency;
  const claim = idempotency?.claim;
  const keyIsFree =
    claim === undefined
      ? sql``
      : sql`and not exists (
          select 1 from idempotency_keys where project_id = ${claim.projectId} and scope = ${claim.scope} and key = ${claim.key}
        )`;
  let storeKey = sql``;
  if (claim !== undefined && idempotency !== undefined) {
    const row = completedKeyRow(claim, { status: 201, body: '' }, input.createdAt);
    storeKey = sql`, stored as (
          insert into idempotency_keys (project_id, scope, key, request_hash, request_fields, state, lock_id, locked_until,
                                        response_status, response_body, created_at, expires_at)
          select ${row.project_id}::text, ${row.scope}::text, ${row.key}::text, ${row.request_hash}::text, ${row.request_fields}::text,
                 ${row.state}::text, null, null, ${row.response_status}::integer,
                 ${idempotency.response.before}::text || balance || ${idempotency.response.after}::text, ${row.created_at}::text, null
          from changed
        )`;
  }
  const lowBalanceEvent =
    input.lowBalanceEventId === undefined
      ? sql``
      : sql`union all
        select ${input.lowBalanceEventId}::text, ${input.projectId}::text, 'wallet.balance.low', ${lowBalanceData(input.walletId)},
               ${`${input.transactionId}.wallet.balance.low`}::text, ${input.createdAt}::text
        from changed
        where low_balance_threshold is not null and balance < low_balance_threshold
          and balance + ${String(input.amount)}::bigint >= low_balance_threshold`;

  const result = await sql<BalanceAfterChange>`${sql.raw(PREPARED_STATEMENT)}
    with changed as (
      update wallets set balance = balance + ${String(delta)}::bigint, updated_at = ${input.createdAt}
      where project_id = ${input.projectId} and id = ${input.walletId} and status = 'active' and ${balanceRule} ${keyIsFree}
      returning balance, currency, low_balance_threshold
    ), recorded as (
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata,
                                       idempotency_key, idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at)
      select ${input.transactionId}::text, ${input.projectId}::text, ${input.type}::text, currency, ${String(input.amount)}::bigint,
             ${input.description}::text, ${input.metadataJson}::text, ${claim?.key ?? null}::text, ${input.walletId}::text,
             ${input.walletId}::text, null, null, ${input.createdAt}::text
      from changed
    ), entries as (
      insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
      select ${input.projectId}::text, ${input.transactionId}::text, ${input.walletId}::text, ${String(delta)}::bigint, balance,
             ${input.createdAt}::text
      from changed
      union all
      select ${input.projectId}::text, ${input.transactionId}::text, ${ISSUANCE_ACCOUNT_PREFIX}::text || currency,
             ${String(-delta)}::bigint, null,
             ${input.createdAt}::text
      from changed
    ), events as (
      insert into events (id, project_id, type, data, idempotency_key, created_at)
      select ${input.event.id}::text, ${input.projectId}::text, ${input.event.type}::text,
             ${input.event.data.before}::text || balance || ${input.event.data.after}::text,
             ${`${input.transactionId}.${input.event.type}`}::text, ${input.createdAt}::text
      from changed
      ${lowBalanceEvent}
    ) ${storeKey} ${movementAudit(input, delta)}
    select balance, currency, low_balance_threshold from changed
  `.execute(db);
  return result.rows[0];
}

/** The audit entry of `moveInOneStatement`, from the changed row; nothing when recording is off. */
function movementAudit(input: OneStatementMovement, delta: number) {
  const audit = input.audit;
  if (audit === undefined) return sql``;
  const changes = movementChangesParts(input.transactionId, input.amount);
  return auditEntryCtes(sql`select ${audit.id}::text, ${input.projectId}::text, ${input.createdAt}::text, ${`wallet.${input.type}`}::text,
      ${audit.actorType}::text, ${audit.actorId}::text, ${audit.actorUserId}::text, 'wallet', ${input.walletId}::text,
      ${audit.requestId}::text, ${audit.ip}::text, ${audit.userAgent}::text, 'success',
      ${changes.before}::text || (balance - ${String(delta)}::bigint) || ${changes.between}::text || balance || ${changes.after}::text
    from changed`);
}

/** One credit or debit of a batch on one wallet (`moveManyInOneStatement`). */
export type BatchedMovement = Omit<OneStatementMovement, 'projectId' | 'walletId'>;

/**
 * Several credits and debits of ONE wallet as ONE statement, for a hot wallet (see WalletBatches):
 * one balance update for their sum, and per movement everything `moveInOneStatement` writes, each
 * with its own balance after. All or nothing: undefined, and nothing written, when the wallet is
 * missing or inactive, the balance would leave its range, or a key is already stored; the caller
 * then runs the movements one by one, which finds each one's answer. A key given twice in the
 * batch, or stored meanwhile by another process, fails the INSERT of the keys and so the whole
 * statement, the same way.
 *
 * The movements arrived together, so any order of them is a valid serial order; the statement
 * applies the credits first and then the debits, each in arrival order. The balance then only rises
 * and then only falls, so it stays in range throughout if it does at the top (balance + credits)
 * and at the end (balance + all), which is what the update checks; and the debits cross a
 * low-balance threshold at most once. Rows are inserted in that order, so a wallet's history
 * chains by `seq`. Answers: the balance after each movement, in the order given.
 */
export async function moveManyInOneStatement(
  db: Kysely<Database>,
  input: { readonly projectId: string; readonly walletId: string; readonly movements: readonly BatchedMovement[] },
): Promise<number[] | undefined> {
  const { projectId, walletId, movements } = input;
  assert(movements.length >= 2, 'a batch has at least two movements');
  const column = <T>(pick: (movement: BatchedMovement) => T) => movements.map(pick);
  const updatedAt = movements.reduce((latest, movement) => (movement.createdAt > latest ? movement.createdAt : latest), '');
  // One probe of the primary key per key, on all three of its columns: a join against the batch, or
  // `key = any(array)`, let the prepared statement's generic plan (made while the table was small)
  // scan every key of the wallet instead, 40 ms per batch on a busy wallet.
  // (`lateral … limit 1` leaves it no other plan.)
  const keys = movements.flatMap((movement) => (movement.idempotency === undefined ? [] : [movement.idempotency.claim.key]));
  const result = await sql<{ ord: string; balance_after: number }>`${sql.raw(PREPARED_STATEMENT)}
    with given as (
      select * from unnest(
        ${column((m) => m.transactionId)}::text[], ${column((m) => m.type)}::text[], ${column((m) => String(m.amount))}::bigint[],
        ${column((m) => m.description)}::text[], ${column((m) => m.metadataJson)}::text[], ${column((m) => m.createdAt)}::text[],
        ${column((m) => m.event.id)}::text[], ${column((m) => m.event.type)}::text[],
        ${column((m) => m.event.data.before)}::text[], ${column((m) => m.event.data.after)}::text[],
        ${column((m) => m.lowBalanceEventId ?? null)}::text[],
        ${column((m) => m.idempotency?.claim.key ?? null)}::text[], ${column((m) => m.idempotency?.claim.requestHash ?? null)}::text[],
        ${column((m) => (m.idempotency === undefined ? null : JSON.stringify(m.idempotency.claim.fields)))}::text[],
        ${column((m) => m.idempotency?.response.before ?? null)}::text[], ${column((m) => m.idempotency?.response.after ?? null)}::text[],
        ${column((m) => m.audit?.id ?? null)}::text[], ${column((m) => m.audit?.actorType ?? null)}::text[],
        ${column((m) => m.audit?.actorId ?? null)}::text[], ${column((m) => m.audit?.actorUserId ?? null)}::text[],
        ${column((m) => m.audit?.requestId ?? null)}::text[], ${column((m) => m.audit?.ip ?? null)}::text[],
        ${column((m) => m.audit?.userAgent ?? null)}::text[]
      ) with ordinality as movement(transaction_id, type, amount, description, metadata, created_at, event_id, event_type,
                                event_before, event_after, low_event_id, key, request_hash, request_fields,
                                response_before, response_after, audit_id, actor_type, actor_id, actor_user_id,
                                request_id, ip, user_agent, ord)
    ), ordered as (
      select given.*, case when type = 'credit' then amount else -amount end as delta,
             row_number() over (order by type = 'debit', ord) as position
      from given
    ), totals as (
      select sum(delta)::bigint as net, coalesce(sum(delta) filter (where delta > 0), 0)::bigint as credited from ordered
    ), changed as (
      update wallets set balance = balance + (select net from totals), updated_at = ${updatedAt}
      where project_id = ${projectId} and id = ${walletId} and status = 'active'
        and balance + (select credited from totals) <= ${String(BALANCE_MAX)}::bigint
        and balance + (select net from totals) >= 0
        and not exists (
          select 1 from unnest(${keys}::text[]) as given_key(key)
          cross join lateral (
            select 1 from idempotency_keys
            where project_id = ${projectId} and scope = ${walletId} and key = given_key.key limit 1
          ) stored
        )
      returning balance, currency, low_balance_threshold
    ), steps as (
      select o.*, c.currency, c.low_balance_threshold,
             (c.balance - (select net from totals) + sum(o.delta) over (order by o.position))::bigint as balance_after
      from ordered o, changed c
    ), recorded as (
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata,
                                       idempotency_key, idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at)
      select transaction_id, ${projectId}::text, type, currency, amount, description, metadata, key, ${walletId}::text,
             ${walletId}::text, null, null, created_at
      from steps order by position
    ), entries as (
      insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
      select ${projectId}::text, transaction_id, account_id, amount, balance_after, created_at
      from (
        select transaction_id, ${walletId}::text as account_id, delta as amount, balance_after, created_at, position, 0 as side
        from steps
        union all
        select transaction_id, ${ISSUANCE_ACCOUNT_PREFIX}::text || currency, -delta, null, created_at, position, 1 from steps
      ) lines
      order by position, side
    ), events as (
      insert into events (id, project_id, type, data, idempotency_key, created_at)
      select event_id, ${projectId}::text, event_type, event_before || balance_after || event_after,
             transaction_id || '.' || event_type, created_at
      from steps
      union all
      select low_event_id, ${projectId}::text, 'wallet.balance.low', ${lowBalanceData(walletId, 'balance_after')},
             transaction_id || '.wallet.balance.low', created_at
      from steps
      where type = 'debit' and low_balance_threshold is not null and balance_after < low_balance_threshold
        and balance_after + amount >= low_balance_threshold
    ), stored as (
      insert into idempotency_keys (project_id, scope, key, request_hash, request_fields, state, lock_id, locked_until,
                                    response_status, response_body, created_at, expires_at)
      select ${projectId}::text, ${walletId}::text, key, request_hash, request_fields, 'completed', null, null, 201,
             response_before || balance_after || response_after, created_at, null
      from steps where key is not null
    ) ${batchAudit(projectId, walletId, movements)}
    select ord, balance_after from steps
  `.execute(db);
  if (result.rows.length === 0) return undefined;
  assert(result.rows.length === movements.length, 'a batch changed all of its movements or none');
  const balances = new Array<number>(movements.length);
  for (const row of result.rows) balances[Number(row.ord) - 1] = row.balance_after;
  return balances;
}

/** The audit entries of `moveManyInOneStatement`, one per step; nothing when recording is off. */
function batchAudit(projectId: string, walletId: string, movements: readonly BatchedMovement[]) {
  if (movements.some((movement) => movement.audit === undefined)) return sql``;
  return auditEntryCtes(sql`select audit_id, ${projectId}::text, created_at, 'wallet.' || type, actor_type, actor_id, actor_user_id,
      'wallet', ${walletId}::text, request_id, ip, user_agent, 'success',
      '{"transaction_id":"' || transaction_id || '","amount":' || amount || ',"balance_before":' || (balance_after - delta)
        || ',"balance_after":' || balance_after || '}'
    from steps order by position`);
}

/**
 * A transfer's two wallets, locked lower id first (see `findWalletsInIdOrder`), as a prepared
 * statement: the columns are named, so the text is fixed (`PREPARED_STATEMENT`).
 */
export async function lockTwoWalletsInIdOrder(
  trx: Kysely<Database>,
  projectId: string,
  walletIds: readonly [string, string],
): Promise<WalletRow[]> {
  const result = await sql<WalletRow>`${sql.raw(PREPARED_STATEMENT)}
    select id, project_id, user_id, currency, balance, status, metadata, low_balance_threshold, created_at, updated_at
    from wallets where project_id = ${projectId} and id in (${walletIds[0]}, ${walletIds[1]})
    order by id for update
  `.execute(trx);
  return result.rows;
}

export interface TransferWrites {
  readonly projectId: string;
  readonly transactionId: string;
  readonly fromWalletId: string;
  readonly toWalletId: string;
  readonly amount: number;
  readonly currency: string;
  readonly description: string | null;
  /** The request's idempotency key, recorded on the transaction; the caller stores the key itself. */
  readonly idempotencyKey: string | null;
  readonly createdAt: string;
  /** `wallet.transfer.sent` and `wallet.transfer.received`: ids and their (shared) data as JSON. */
  readonly events: { readonly sentId: string; readonly receivedId: string; readonly dataJson: string };
  /** The id `wallet.balance.low` gets if this transfer takes the source below its threshold. */
  readonly lowBalanceEventId: string;
  /** The transfer's audit entry, whole (the checked balances say what it changes); undefined when recording is off. */
  readonly audit: AuditRow | undefined;
}

export interface TransferWritten {
  readonly changed: readonly (BalanceAfterChange & { readonly id: string })[];
}

/**
 * The writes of a transfer on PostgreSQL in ONE statement: both balances, the transaction, its
 * entries and its events (a request's key is stored beside it, in the same transaction, by the
 * caller). It must run in the transaction that has already
 * locked both wallets (lower id first) and checked the rules: this statement's snapshot is taken
 * after those locks, so it reads the balances that were checked.
 *
 * (Checking and writing in one statement is not safe: a CTE's FOR UPDATE and the UPDATE beside it
 * may read different versions of a row changed concurrently; a stress test found balances below
 * zero that way, stopped only by the CHECK constraint.)
 */
export async function writeTransferInOneStatement(trx: Kysely<Database>, input: TransferWrites): Promise<TransferWritten> {
  const { projectId, fromWalletId, toWalletId, transactionId, createdAt } = input;
  const amount = String(input.amount);
  const signed = sql`(case when id = ${fromWalletId}::text then -${amount}::bigint else ${amount}::bigint end)`;

  const result = await sql<BalanceAfterChange & { id: string }>`${sql.raw(PREPARED_STATEMENT)}
    with changed as (
      update wallets set balance = balance + ${signed}, updated_at = ${createdAt}
      where project_id = ${projectId} and id in (${fromWalletId}, ${toWalletId}) and status = 'active'
        and balance + ${signed} between 0 and ${String(BALANCE_MAX)}::bigint
      returning id, balance, currency, low_balance_threshold
    ), recorded as (
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata,
                                       idempotency_key, idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at)
      values (${transactionId}, ${projectId}, 'transfer', ${input.currency}, ${amount}::bigint, ${input.description}, '{}',
              ${input.idempotencyKey}, '', null, ${fromWalletId}, ${toWalletId}, ${createdAt})
    ), entries as (
      insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
      select ${projectId}::text, ${transactionId}::text, id, ${signed}, balance, ${createdAt}::text
      from changed
    ), events as (
      insert into events (id, project_id, type, data, idempotency_key, created_at)
      values (${input.events.sentId}, ${projectId}, 'wallet.transfer.sent', ${input.events.dataJson},
              ${`${transactionId}.wallet.transfer.sent`}, ${createdAt}),
             (${input.events.receivedId}, ${projectId}, 'wallet.transfer.received', ${input.events.dataJson},
              ${`${transactionId}.wallet.transfer.received`}, ${createdAt})
    ), low as (
      insert into events (id, project_id, type, data, idempotency_key, created_at)
      select ${input.lowBalanceEventId}::text, ${projectId}::text, 'wallet.balance.low', ${lowBalanceData(fromWalletId)},
             ${`${transactionId}.wallet.balance.low`}::text, ${createdAt}::text
      from changed
      where id = ${fromWalletId}::text and low_balance_threshold is not null and balance < low_balance_threshold
        and balance + ${amount}::bigint >= low_balance_threshold
    ) ${transferAudit(input.audit)}
    select id, balance, currency, low_balance_threshold from changed
  `.execute(trx);
  return { changed: result.rows };
}

/** A transfer's audit entry as a CTE of its statement; nothing when recording is off. */
function transferAudit(row: AuditRow | undefined) {
  if (row === undefined) return sql``;
  return auditEntryCtes(sql`values (${row.id}, ${row.project_id}, ${row.created_at}, ${row.action}, ${row.actor_type}, ${row.actor_id},
      ${row.actor_user_id}, ${row.resource_type}, ${row.resource_id}, ${row.request_id}, ${row.ip}, ${row.user_agent}, ${row.outcome},
      ${row.changes})`);
}

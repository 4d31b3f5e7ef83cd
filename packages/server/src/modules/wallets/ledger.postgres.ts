import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { IdempotencyLock } from '../../http/idempotency.store.js';
import { assert } from '../../shared/assert.js';
import { type BalanceAfterChange, ISSUANCE_ACCOUNT_PREFIX } from './ledger.store.js';
import { BALANCE_MAX } from './wallets.schemas.js';

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
function lowBalanceData(walletId: string) {
  return sql`${`{"wallet_id":${JSON.stringify(walletId)},"balance":`}::text || balance
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
  /** The held key and the response to store with it, balance_after open. */
  readonly idempotency: { readonly lock: IdempotencyLock; readonly response: JsonWithOpenNumber } | undefined;
}

/**
 * A credit or debit on PostgreSQL as ONE statement: the conditional balance update, the
 * transaction, its two entries, its events and the stored idempotent response, in data-modifying
 * CTEs that all read the row the update returns. Every part happens or none does (one statement is
 * one transaction), and the wallet's row lock is held only while this statement commits, so a hot
 * wallet serves as many movements as commits allow. Round trips: one.
 *
 * Undefined when the update matched nothing (missing or inactive wallet, balance out of range, or
 * the idempotency key no longer held): nothing was written; the caller finds out why.
 *
 * The key's row is locked first (`held`), and the wallet changes only while it is held: the key can
 * not be taken over between the check and the store.
 */
export async function moveInOneStatement(db: Kysely<Database>, input: OneStatementMovement): Promise<BalanceAfterChange | undefined> {
  const delta = input.type === 'credit' ? input.amount : -input.amount;
  const balanceRule = delta < 0 ? sql`balance >= ${String(-delta)}::bigint` : sql`balance <= ${String(BALANCE_MAX - delta)}::bigint`;
  const idempotency = input.idempotency;
  const key = idempotency?.lock;
  const held =
    key === undefined
      ? sql``
      : sql`held as (
          select 1 from idempotency_keys
          where project_id = ${key.projectId} and scope = ${key.scope} and key = ${key.key} and lock_id = ${key.lockId}
          for update
        ),`;
  const stillHeld = key === undefined ? sql`` : sql`and exists (select 1 from held)`;
  const storeResponse =
    key === undefined || idempotency === undefined
      ? sql``
      : sql`, stored as (
          update idempotency_keys
          set state = 'completed', response_status = 201,
              response_body = ${idempotency.response.before}::text || (select balance from changed) || ${idempotency.response.after}::text,
              lock_id = null, locked_until = null
          where project_id = ${key.projectId} and scope = ${key.scope} and key = ${key.key} and lock_id = ${key.lockId}
            and exists (select 1 from changed)
        )`;
  const lowBalanceEvent =
    input.lowBalanceEventId === undefined
      ? sql``
      : sql`union all
        select ${input.lowBalanceEventId}::text, ${input.projectId}::text, 'wallet.balance.low', ${lowBalanceData(input.walletId)},
               ${`${input.transactionId}.wallet.balance.low`}::text, ${input.createdAt}::text
        from changed
        where low_balance_threshold is not null and balance < low_balance_threshold
          and balance + ${String(input.amount)}::bigint >= low_balance_threshold`;

  const result = await sql<BalanceAfterChange>`
    with ${held} changed as (
      update wallets set balance = balance + ${String(delta)}::bigint, updated_at = ${input.createdAt}
      where project_id = ${input.projectId} and id = ${input.walletId} and status = 'active' and ${balanceRule} ${stillHeld}
      returning balance, currency, low_balance_threshold
    ), recorded as (
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata,
                                       idempotency_key, idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at)
      select ${input.transactionId}::text, ${input.projectId}::text, ${input.type}::text, currency, ${String(input.amount)}::bigint,
             ${input.description}::text, ${input.metadataJson}::text, ${key?.key ?? null}::text, ${input.walletId}::text,
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
    ) ${storeResponse}
    select balance, currency, low_balance_threshold from changed
  `.execute(db);
  return result.rows[0];
}

export interface TransferWrites {
  readonly projectId: string;
  readonly transactionId: string;
  readonly fromWalletId: string;
  readonly toWalletId: string;
  readonly amount: number;
  readonly currency: string;
  readonly description: string | null;
  readonly createdAt: string;
  /** `wallet.transfer.sent` and `wallet.transfer.received`: ids and their (shared) data as JSON. */
  readonly events: { readonly sentId: string; readonly receivedId: string; readonly dataJson: string };
  /** The id `wallet.balance.low` gets if this transfer takes the source below its threshold. */
  readonly lowBalanceEventId: string;
  readonly idempotency: { readonly lock: IdempotencyLock; readonly responseJson: string } | undefined;
}

export interface TransferWritten {
  readonly changed: readonly (BalanceAfterChange & { readonly id: string })[];
  /** False when the idempotency key was no longer held: the caller must roll back. */
  readonly responseStored: boolean;
}

/**
 * The writes of a transfer on PostgreSQL in ONE statement: both balances, the transaction, its
 * entries, its events and the stored response. It must run in the transaction that has already
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
  const key = input.idempotency?.lock;
  const storeResponse =
    key === undefined || input.idempotency === undefined
      ? sql`, stored as (select 1)`
      : sql`, stored as (
          update idempotency_keys
          set state = 'completed', response_status = 201, response_body = ${input.idempotency.responseJson}::text,
              lock_id = null, locked_until = null
          where project_id = ${key.projectId} and scope = ${key.scope} and key = ${key.key} and lock_id = ${key.lockId}
          returning 1
        )`;
  const signed = sql`(case when id = ${fromWalletId}::text then -${amount}::bigint else ${amount}::bigint end)`;

  const result = await sql<BalanceAfterChange & { id: string; stored: number }>`
    with changed as (
      update wallets set balance = balance + ${signed}, updated_at = ${createdAt}
      where project_id = ${projectId} and id in (${fromWalletId}, ${toWalletId}) and status = 'active'
        and balance + ${signed} between 0 and ${String(BALANCE_MAX)}::bigint
      returning id, balance, currency, low_balance_threshold
    ), recorded as (
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata,
                                       idempotency_key, idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at)
      values (${transactionId}, ${projectId}, 'transfer', ${input.currency}, ${amount}::bigint, ${input.description}, '{}',
              ${key?.key ?? null}, '', null, ${fromWalletId}, ${toWalletId}, ${createdAt})
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
    ) ${storeResponse}
    select id, balance, currency, low_balance_threshold, (select count(*) from stored) as stored from changed
  `.execute(trx);
  return {
    changed: result.rows.map(({ id, balance, currency, low_balance_threshold }) => ({ id, balance, currency, low_balance_threshold })),
    responseStored: result.rows.every((row) => row.stored === 1),
  };
}

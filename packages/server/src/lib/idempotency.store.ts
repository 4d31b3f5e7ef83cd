import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db/database.js';
import { selectByKeys } from '../db/list-statements.js';
import type { Database, IdempotencyKeysTable } from '../db/schema.js';
import { addMilliseconds, isoTime } from './clock.js';
import { ApiError } from './errors.js';
import {
  type IdempotencyKeyName,
  openResponse,
  SEALED_REQUEST_HASH,
  sealFingerprint,
  sealResponse,
  storedFingerprint,
} from './idempotency.sealing.js';
import type { SecretBox } from './secret-box.js';

type Executor = Kysely<Database>;

/**
 * One idempotency key of one request (docs/adr/0004-idempotency.md): its name, the fingerprint
 * of the request that carries it, and how long it is kept. The key is written only in the database
 * transaction of the change the request makes, together with the response, so a key row always
 * means "this ran, and this was the answer".
 */
export interface IdempotentRequest extends IdempotencyKeyName {
  readonly requestHash: string;
  /** Field name → hash of its value; `$route` stands for the method, route and path parameters. */
  readonly fields: Readonly<Record<string, string>>;
  /** Null keeps the key forever (ledger operations). */
  readonly retentionMs: number | null;
  /** The id of the request. */
  readonly requestId: string;
}

/** What a request's response is stored as, and replayed as. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * A request's key as a write path that keeps keys in its own transaction takes it (the ledger's
 * group commit): how to read a row of it that another process committed meanwhile, and how to
 * answer an outcome and store that answer.
 */
export interface RequestKey<Outcome> {
  readonly name: IdempotencyKeyName;
  /** The answer kept in `row`, undefined when the row no longer counts; throws 422 for another request under the key. */
  readonly storedAnswer: (row: IdempotencyKeysTable) => StoredAnswer | undefined;
  /** This request's answer to `outcome`, and the row that keeps it. */
  readonly complete: (outcome: Outcome) => { readonly answer: StoredAnswer; readonly row: IdempotencyKeysTable };
}

/** How a keyed request was answered by such a write path. */
export type RequestAnswer =
  { readonly kind: 'answered' | 'replayed'; readonly answer: StoredAnswer } | { readonly kind: 'refused'; readonly error: ApiError };

/** The row that stores `answer` under `request`'s key: the fingerprint and the body sealed. */
export function completedKeyRow(secrets: SecretBox, request: IdempotentRequest, answer: StoredAnswer, now: Date): IdempotencyKeysTable {
  return {
    ...keyRowBase(request, answer, now),
    request_hash: SEALED_REQUEST_HASH,
    request_fields: sealFingerprint(secrets, request, { hash: request.requestHash, fields: request.fields }),
    response_body: sealResponse(secrets, request, answer.body),
  };
}

/**
 * The row of a key the ledger claims in its own flush (batches, captures, voids), in clear like the
 * ledger's movement keys: a ledger answer holds transactions and holds, never a credential, and
 * it is kept as long as the ledger rows it repeats, which are in clear themselves. A batch's
 * answer runs to hundreds of kilobytes, which sealing would copy five times over.
 */
export function ledgerKeyRow(request: IdempotentRequest, answer: StoredAnswer, now: Date): IdempotencyKeysTable {
  return {
    ...keyRowBase(request, answer, now),
    request_hash: request.requestHash,
    request_fields: JSON.stringify(request.fields),
    response_body: answer.body,
  };
}

function keyRowBase(request: IdempotentRequest, answer: StoredAnswer, now: Date) {
  return {
    project_id: request.projectId,
    scope: request.scope,
    key: request.key,
    state: 'completed',
    lock_id: null,
    locked_until: null,
    response_status: answer.status,
    created_at: isoTime(now),
    expires_at: request.retentionMs === null ? null : isoTime(addMilliseconds(now, request.retentionMs)),
  } as const;
}

/** Writes completed keys, in the transaction of the change they answer for. */
export async function insertCompletedKeys(trx: Executor, rows: readonly IdempotencyKeysTable[]): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('idempotency_keys')
    .values([...rows])
    .execute();
}

/**
 * How to answer a request whose key is already stored: the stored answer again (`replay`), or
 * undefined when the key is free (never used, past its retention, or left `running` by a release
 * that claimed keys before their change). Throws 422 `idempotency_key_reused` for another request.
 */
export async function storedAnswer(
  db: Executor,
  secrets: SecretBox,
  request: IdempotentRequest,
  now: Date,
): Promise<StoredAnswer | undefined> {
  const rows = await findKeys(db, [request]);
  const row = rows[0];
  return row === undefined ? undefined : answerFrom(secrets, request, row, now);
}

/** The stored rows of these keys, in no particular order. */
export async function findKeys(db: Executor, names: readonly IdempotencyKeyName[]): Promise<IdempotencyKeysTable[]> {
  // A row-value IN list: both databases find each key through the primary key (an OR of ANDs
  // made SQLite scan the table).
  return selectByKeys(
    db.selectFrom('idempotency_keys').selectAll(),
    ['project_id', 'scope', 'key'],
    names.map((name) => [name.projectId, name.scope, name.key]),
  );
}

/** The answer stored in `row` for `request`, checked against its fingerprint; undefined when the row no longer counts. */
export function answerFrom(secrets: SecretBox, request: IdempotentRequest, row: IdempotencyKeysTable, now: Date): StoredAnswer | undefined {
  if (row.expires_at !== null && row.expires_at <= isoTime(now)) return undefined;
  // A claim without its change: nothing it did was committed with it.
  if (row.state !== 'completed') return undefined;
  const stored = storedFingerprint(secrets, request, row);
  if (stored.hash !== request.requestHash) throw reusedError(request.key, request.fields, stored.fields);
  return { status: row.response_status ?? 200, body: openResponse(secrets, request, row.response_body) };
}

/** Removes a row that no longer counts (expired, or an old claim without its change) so the key can be written again. */
export async function deleteStaleKey(trx: Executor, name: IdempotencyKeyName, now: Date): Promise<void> {
  const nowIso = isoTime(now);
  await trx
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', name.projectId)
    .where('scope', '=', name.scope)
    .where('key', '=', name.key)
    .where((eb) => eb.or([eb('expires_at', '<=', nowIso), eb('state', '!=', 'completed')]))
    .execute();
}

/**
 * PostgreSQL: takes the key's transaction-scoped advisory lock, or answers false at once when
 * another transaction holds it, i.e. the same key's request is running in another process. The
 * lock ends with the transaction, so a request that died frees its key at once. SQLite has one
 * writer, whose `BEGIN IMMEDIATE` already excludes every other transaction: always true.
 */
export async function tryLockKey(trx: Executor, dialect: Dialect, name: IdempotencyKeyName): Promise<boolean> {
  if (dialect !== 'postgres') return true;
  const text = JSON.stringify([name.projectId, name.scope, name.key]);
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${text}, 0)) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/** Deletes keys past their retention, at most `batchSize` per call; returns how many it deleted. */
export async function deleteExpiredIdempotencyKeys(db: Executor, now: Date, batchSize: number): Promise<number> {
  const nowIso = isoTime(now);
  const expired = await db
    .selectFrom('idempotency_keys')
    .select(['project_id', 'scope', 'key'])
    .where('expires_at', '<=', nowIso)
    .limit(batchSize)
    .execute();
  let deleted = 0;
  for (const row of expired) {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where('project_id', '=', row.project_id)
      .where('scope', '=', row.scope)
      .where('key', '=', row.key)
      .where('expires_at', '<=', nowIso)
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}

export function idempotencyInUseError(key: string): ApiError {
  return new ApiError('idempotency_key_in_use', `A request with idempotency key "${key}" is still running. Retry once it has finished.`);
}

/**
 * 422 `idempotency_key_reused`, naming the first field (in sorted order) whose value differs. The
 * one mismatch that makes "another request" of a different kind (`kind.field`: `$route` for a
 * request, `type` for a ledger movement) is said in words instead.
 */
export function reusedError(
  key: string,
  fields: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, string>>,
  kind: { readonly field: string; readonly message: string } = { field: '$route', message: 'for a request to another route' },
): ApiError {
  const differing = firstDifference(fields, stored, kind.field);
  const usage =
    differing === kind.field ? kind.message : `with a different request${differing === undefined ? '' : `: "${differing}" differs`}`;
  return new ApiError(
    'idempotency_key_reused',
    `Idempotency key "${key}" was already used ${usage}.`,
    differing === undefined || differing === kind.field ? {} : { param: differing },
  );
}

/** The field that makes two requests differ: `kindField` when they are of different kinds, else the first differing field in sorted order. */
function firstDifference(
  fields: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, string>>,
  kindField: string,
): string | undefined {
  if (stored[kindField] !== fields[kindField]) return kindField;
  const names = [...new Set([...Object.keys(stored), ...Object.keys(fields)])].sort();
  return names.find((name) => stored[name] !== fields[name]);
}

/**
 * The keys whose requests are running in this process. A second request with a running key is
 * answered 409 at once instead of waiting for the first one's transaction; across processes the
 * PostgreSQL advisory lock (`tryLockKey`) does the same. An entry lives exactly as long as its
 * request, so a key is never "in use" after its request has ended, however it ended.
 */
export class KeysInFlight {
  readonly #running = new Set<string>();

  /** False when the key is already running here. */
  enter(name: IdempotencyKeyName): boolean {
    const id = keyId(name);
    if (this.#running.has(id)) return false;
    this.#running.add(id);
    return true;
  }

  leave(name: IdempotencyKeyName): void {
    this.#running.delete(keyId(name));
  }
}

function keyId(name: IdempotencyKeyName): string {
  return JSON.stringify([name.projectId, name.scope, name.key]);
}

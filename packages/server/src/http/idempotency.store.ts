import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { addMilliseconds, isoTime } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { randomBase62 } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import { openResponse, SEALED_REQUEST_HASH, sealFingerprint, sealResponse, storedFingerprint } from './idempotency.sealing.js';

type Executor = Kysely<Database>;

/** Proof that this request holds an idempotency key while it runs. */
export interface IdempotencyLock {
  readonly projectId: string;
  readonly scope: string;
  readonly key: string;
  readonly lockId: string;
}

export type BeginResult =
  | { readonly kind: 'acquired'; readonly lock: IdempotencyLock }
  | { readonly kind: 'replay'; readonly status: number; readonly body: string };

export interface BeginInput {
  readonly projectId: string;
  readonly scope: string;
  readonly key: string;
  readonly requestHash: string;
  /** Field name → hash of its value; `$route` stands for the method, route and path parameters. */
  readonly fields: Readonly<Record<string, string>>;
  readonly now: Date;
  /** How long the key stays locked if its request never finishes (a crash). */
  readonly leaseMs: number;
  /** Null keeps the key forever (ledger operations). */
  readonly retentionMs: number | null;
  /** Seals the request's fingerprint and opens a stored response (http/idempotency.sealing.ts). */
  readonly secrets: SecretBox;
}

const BEGIN_ATTEMPTS_MAX = 3;

/**
 * Claims an idempotency key for a request, or tells how to answer instead.
 *
 * The claim is one INSERT … ON CONFLICT DO NOTHING, atomic on both dialects and across processes:
 * of two concurrent requests with the same key exactly one inserts; the other reads the row and
 * answers 409 (still running), 422 (different request) or the stored response (replay).
 */
export async function beginIdempotentRequest(db: Executor, input: BeginInput): Promise<BeginResult> {
  const nowIso = isoTime(input.now);
  for (let attempt = 1; attempt <= BEGIN_ATTEMPTS_MAX; attempt += 1) {
    const lockId = randomBase62(22);
    const lockedUntil = isoTime(addMilliseconds(input.now, input.leaseMs));
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        project_id: input.projectId,
        scope: input.scope,
        key: input.key,
        request_hash: SEALED_REQUEST_HASH,
        request_fields: sealFingerprint(input.secrets, input, { hash: input.requestHash, fields: input.fields }),
        state: 'running',
        lock_id: lockId,
        locked_until: lockedUntil,
        response_status: null,
        response_body: null,
        created_at: nowIso,
        expires_at: input.retentionMs === null ? null : isoTime(addMilliseconds(input.now, input.retentionMs)),
      })
      .onConflict((conflict) => conflict.columns(['project_id', 'scope', 'key']).doNothing())
      .executeTakeFirst();
    const lock: IdempotencyLock = { projectId: input.projectId, scope: input.scope, key: input.key, lockId };
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: 'acquired', lock };

    const existing = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('project_id', '=', input.projectId)
      .where('scope', '=', input.scope)
      .where('key', '=', input.key)
      .executeTakeFirst();
    if (existing === undefined) continue; // removed by the cleanup job in between: claim it again

    if (existing.expires_at !== null && existing.expires_at <= nowIso) {
      // Past its retention but not yet swept: the key is free again.
      await db
        .deleteFrom('idempotency_keys')
        .where('project_id', '=', input.projectId)
        .where('scope', '=', input.scope)
        .where('key', '=', input.key)
        .where('expires_at', '<=', nowIso)
        .execute();
      continue;
    }
    const stored = storedFingerprint(input.secrets, input, existing);
    if (stored.hash !== input.requestHash) throw reusedError(input.key, input.fields, stored.fields);
    if (existing.state === 'completed') {
      return { kind: 'replay', status: existing.response_status ?? 200, body: openResponse(input.secrets, input, existing.response_body) };
    }
    if (existing.locked_until !== null && existing.locked_until > nowIso) throw inUseError(input.key);

    // The request that held the key died without finishing; nothing it did was committed with the
    // key, so this request may run in its place. The lock id makes the takeover race-free.
    const takenOver = await db
      .updateTable('idempotency_keys')
      .set({ lock_id: lockId, locked_until: lockedUntil })
      .where('project_id', '=', input.projectId)
      .where('scope', '=', input.scope)
      .where('key', '=', input.key)
      .where('state', '=', 'running')
      .where('lock_id', existing.lock_id === null ? 'is' : '=', existing.lock_id)
      .executeTakeFirst();
    if (takenOver.numUpdatedRows === 1n) return { kind: 'acquired', lock };
    throw inUseError(input.key);
  }
  throw inUseError(input.key);
}

/**
 * Stores the response for replay, sealed. Pass the transaction of the operation itself where there
 * is one, so that the operation and its key commit together. Returns false when the lock was lost
 * (the lease ran out and another request took the key over); a caller inside a transaction must
 * then roll back.
 */
export async function completeIdempotentRequest(
  db: Executor,
  secrets: SecretBox,
  lock: IdempotencyLock,
  answer: { readonly status: number; readonly body: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: answer.status,
      response_body: sealResponse(secrets, lock, answer.body),
      lock_id: null,
      locked_until: null,
    })
    .where('project_id', '=', lock.projectId)
    .where('scope', '=', lock.scope)
    .where('key', '=', lock.key)
    .where('lock_id', '=', lock.lockId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * A request's key and fingerprint, for a route that keeps its keys itself instead of in the
 * `preHandler` hook: the ledger, which maps a key to its transaction inside the movement's own
 * database transaction (docs/adr/0004-idempotency.md).
 */
export interface IdempotencyClaim {
  readonly projectId: string;
  readonly scope: string;
  readonly key: string;
  readonly requestHash: string;
  /** Field name → hash of its value; `$route` stands for the method, route and path parameters. */
  readonly fields: Readonly<Record<string, string>>;
  /** The id of the request: a refusal is stored as the error body that names it. */
  readonly requestId: string;
}

/** Frees a key whose request failed before it changed anything, so the client can send it again. */
export async function releaseIdempotentRequest(db: Executor, lock: IdempotencyLock): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', lock.projectId)
    .where('scope', '=', lock.scope)
    .where('key', '=', lock.key)
    .where('lock_id', '=', lock.lockId)
    .execute();
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

function inUseError(key: string): ApiError {
  return new ApiError('idempotency_key_in_use', `A request with idempotency key "${key}" is still running. Retry once it has finished.`);
}

function reusedError(key: string, fields: Readonly<Record<string, string>>, stored: Record<string, string>): ApiError {
  if (stored['$route'] !== fields['$route']) {
    return new ApiError('idempotency_key_reused', `Idempotency key "${key}" was already used for a request to another route.`);
  }
  const names = [...new Set([...Object.keys(stored), ...Object.keys(fields)])].sort();
  const differing = names.find((name) => stored[name] !== fields[name]);
  return new ApiError(
    'idempotency_key_reused',
    differing === undefined
      ? `Idempotency key "${key}" was already used with a different request.`
      : `Idempotency key "${key}" was already used with a different request: "${differing}" differs.`,
    differing === undefined ? {} : { param: differing },
  );
}

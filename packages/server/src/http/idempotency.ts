import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { RequestTransaction } from '../db/request-transaction.js';
import { assert } from '../lib/assert.js';
import type { Clock } from '../lib/clock.js';
import { canonicalJson, sha256Hex } from '../lib/crypto.js';
import { ApiError, renderError } from '../lib/errors.js';
import {
  answerFrom,
  completedKeyRow,
  ledgerKeyRow,
  deleteStaleKey,
  findKeys,
  idempotencyInUseError,
  type IdempotentRequest,
  type RequestKey,
  insertCompletedKeys,
  KeysInFlight,
  type StoredAnswer,
  storedAnswer,
  tryLockKey,
} from '../lib/idempotency.store.js';
import type { SecretBox } from '../lib/secret-box.js';

/** How long generic keys are kept (docs/api.md section 1). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
const KEY_LENGTH_MAX = 255;
const KEY_PATTERN = /^[\x21-\x7e]+$/;
const JSON_TYPE = 'application/json; charset=utf-8';

export interface RouteIdempotency {
  /**
   * `off` for routes that must not take a key at all: the browser-facing identity provider returns
   * (SAML ACS), which no API client sends. Responses that carry a credential are kept, sealed
   * (lib/idempotency.sealing.ts), so they need no exception.
   */
  readonly mode?: 'request' | 'off';
  /** Keys are per project; a route may narrow them further (per wallet for credits and debits). */
  readonly scope?: (request: FastifyRequest) => string;
  /** `forever` for ledger operations. */
  readonly retention?: 'day' | 'forever';
  /** The route also takes the key as `idempotency_key` in its body (credit operations). */
  readonly bodyKey?: boolean;
  /**
   * Where the key is written, always in the database transaction of the request's change
   * (docs/adr/0004-idempotency.md):
   * - `request` (default): the request runs in a transaction of its own (db/request-transaction.ts)
   *   that the hook opens before the handler and commits with the key and the response after it;
   * - `ledger`: the ledger's group commit writes the key and the response in the flush that applies
   *   the request (`PendingIdempotency.forLedger`);
   * - `movement`: the key is a movement's own key, kept by the ledger with the transaction it made
   *   (credits, debits, transfers, holds); the hook only checks it (`request.idempotencyClaim`).
   */
  readonly claim?: 'request' | 'ledger' | 'movement';
}

/** A movement key, as the ledger takes it (`claim: 'movement'`). */
export interface IdempotencyClaim {
  readonly key: string;
}

/** The key a running request holds. */
export interface PendingIdempotency {
  readonly request: IdempotentRequest;
  /** The request's own transaction (`claim: 'request'`); undefined on ledger routes. */
  readonly transaction: RequestTransaction | undefined;
  settled: boolean;
  /** The key as the ledger's write path takes it, with how to answer each outcome (`claim: 'ledger'`). */
  forLedger<Outcome>(answerOf: (outcome: Outcome) => StoredAnswer): RequestKey<Outcome>;
}

export interface IdempotencyOptions {
  readonly db: Db;
  readonly clock: Clock;
  /** The service's keyring: every stored response and request fingerprint is sealed with it. */
  readonly secrets: SecretBox;
}

/**
 * `Idempotency-Key` on any POST (docs/adr/0004-idempotency.md). The preHandler runs after the
 * credential guard and schema validation, so a request refused for those reasons never claims its
 * key and can be corrected and sent again with it. It answers a stored key from the store; else it
 * marks the key running in this process (a second request with it is 409 until the first ends) and,
 * on ordinary routes, opens the request's transaction, in which the handler then runs. The onSend
 * hook writes the key and the response in that transaction and commits it: the change and its
 * answer commit together, or neither does. A 5xx rolls everything back, so the key stays free.
 */
export function idempotencyHooks(options: IdempotencyOptions) {
  const { db, clock, secrets } = options;
  const inFlight = new KeysInFlight();

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<RequestTransaction | 'answered' | undefined> {
    if (request.method !== 'POST') return undefined;
    const config: RouteIdempotency = request.routeOptions.config.idempotency ?? {};
    if (config.mode === 'off') return undefined;
    const key = readIdempotencyKey(request, config.bodyKey === true);
    if (key === undefined || request.principal === undefined) return undefined;
    if (config.claim === 'movement') {
      request.idempotencyClaim = { key };
      return undefined;
    }

    const fields = requestFields(request);
    const idempotent: IdempotentRequest = {
      projectId: request.principal.projectId,
      // An end user's keys are kept per user (a session route's default), so two users' keys never meet.
      scope: config.scope?.(request) ?? (request.principal.kind === 'session' ? `user:${request.principal.userId}` : ''),
      key,
      requestHash: sha256Hex(canonicalJson(fields)),
      fields,
      retentionMs: config.retention === 'forever' ? null : IDEMPOTENCY_RETENTION_MS,
      requestId: request.id,
    };
    // Running here: 409 at once, without waiting for the database (SQLite's one connection may be
    // held by that very request's transaction).
    if (!inFlight.enter(idempotent)) throw idempotencyInUseError(key);
    try {
      // A ledger request reads its key before it joins a flush, so a replay costs no flush; an
      // ordinary request reads it once, inside its own transaction (`openFor`).
      const opened =
        config.claim === 'ledger' ? await storedAnswer(db.kysely, secrets, idempotent, clock.now()) : await openFor(idempotent);
      if (opened !== undefined && !(opened instanceof RequestTransaction)) {
        inFlight.leave(idempotent);
        sendStored(reply, opened, true);
        return 'answered';
      }
      request.idempotency = pending(idempotent, opened);
      return opened;
    } catch (error) {
      inFlight.leave(idempotent);
      throw error;
    }
  }

  /**
   * Opens the request's transaction with its key locked in it (PostgreSQL's advisory lock: 409 while
   * another process runs the same key), and looks the key up inside it: a stored answer is
   * replayed instead, and the transaction rolled back.
   */
  async function openFor(idempotent: IdempotentRequest): Promise<RequestTransaction | StoredAnswer> {
    const transaction = await RequestTransaction.open(db.base ?? db.kysely, db.dialect);
    try {
      const connection = transaction.connection;
      assert(connection !== undefined, 'a transaction just opened is open');
      if (!(await tryLockKey(connection, db.dialect, idempotent))) throw idempotencyInUseError(idempotent.key);
      const now = clock.now();
      const [row] = await findKeys(connection, [idempotent]);
      if (row !== undefined) {
        const answer = answerFrom(secrets, idempotent, row, now);
        if (answer !== undefined) {
          await transaction.rollback();
          return answer;
        }
        await deleteStaleKey(connection, idempotent, now);
      }
      return transaction;
    } catch (error) {
      await transaction.rollback().catch(() => undefined);
      throw error;
    }
  }

  function pending(idempotent: IdempotentRequest, transaction: RequestTransaction | undefined): PendingIdempotency {
    return {
      request: idempotent,
      transaction,
      settled: false,
      forLedger: <Outcome>(answerOf: (outcome: Outcome) => StoredAnswer): RequestKey<Outcome> => ({
        name: idempotent,
        storedAnswer: (row) => answerFrom(secrets, idempotent, row, clock.now()),
        complete: (outcome) => {
          const answer = answerOf(outcome);
          return { answer, row: ledgerKeyRow(idempotent, answer, clock.now()) };
        },
      }),
    };
  }

  /** Callback style, so that the handler runs inside the request's transaction (`RequestTransaction.run`). */
  function preHandler(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    begin(request, reply).then(
      (begun) => {
        if (begun === 'answered') return;
        if (begun === undefined) done();
        else begun.run(() => done());
      },
      (error: unknown) => done(error as Error),
    );
  }

  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const held = request.idempotency;
    if (held === undefined || held.settled) return payload;
    held.settled = true;
    try {
      const transaction = held.transaction;
      if (transaction === undefined) return payload;
      if (reply.statusCode >= 500) {
        await transaction.rollback();
        return payload;
      }
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
      try {
        const connection = transaction.connection;
        assert(connection !== undefined, 'the request transaction stays open until its response is stored');
        await insertCompletedKeys(connection, [completedKeyRow(secrets, held.request, { status: reply.statusCode, body }, clock.now())]);
        await transaction.commit();
        return payload;
      } catch (error) {
        await transaction.rollback().catch(() => undefined);
        // The change may or may not have committed (a connection lost during COMMIT); either way
        // its key went with it, so a retry with the key replays it or runs it: never twice.
        request.log.error({ err: error, idempotencyKey: held.request.key }, 'the request transaction did not commit');
        void reply.code(503).header('Retry-After', '1').type(JSON_TYPE);
        return JSON.stringify(
          renderError(
            new ApiError('service_unavailable', 'The change could not be committed; retry with the same Idempotency-Key.'),
            request.id,
          ),
        );
      }
    } finally {
      inFlight.leave(held.request);
    }
  }

  /** A request that ended without a response through onSend (its socket gone): nothing of it commits. */
  async function onResponse(request: FastifyRequest): Promise<void> {
    const held = request.idempotency;
    if (held === undefined || held.settled) return;
    held.settled = true;
    inFlight.leave(held.request);
    await held.transaction?.rollback();
  }

  return { preHandler, onSend, onResponse };
}

/** A stored answer, sent as it was first sent. */
function sendStored(reply: FastifyReply, answer: StoredAnswer, replayed: boolean): FastifyReply {
  if (replayed) void reply.header('Idempotent-Replayed', 'true');
  return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
}

/**
 * The request's idempotency key: the `Idempotency-Key` header, or on routes that take it, the
 * body's `idempotency_key`. Both given and different is a client error, not a guess.
 */
export function readIdempotencyKey(request: FastifyRequest, bodyKey: boolean): string | undefined {
  const header = request.headers['idempotency-key'];
  const headerKey = Array.isArray(header) ? header[0] : header;
  if (headerKey !== undefined) checkKey(headerKey, 'Idempotency-Key');
  if (!bodyKey) return headerKey;
  const body = request.body as { idempotency_key?: unknown } | null | undefined;
  const fromBody = body?.idempotency_key;
  if (fromBody === undefined) return headerKey;
  if (typeof fromBody !== 'string')
    throw new ApiError('parameter_invalid', 'idempotency_key must be a string.', { param: 'idempotency_key' });
  checkKey(fromBody, 'idempotency_key');
  if (headerKey !== undefined && headerKey !== fromBody) {
    throw new ApiError(
      'parameter_invalid',
      "The Idempotency-Key header and the body's idempotency_key differ; send one, or the same in both.",
      {
        param: 'idempotency_key',
      },
    );
  }
  return fromBody;
}

function checkKey(key: string, param: string): void {
  if (key.length === 0 || key.length > KEY_LENGTH_MAX || !KEY_PATTERN.test(key)) {
    throw new ApiError('parameter_invalid', `${param} must be 1 to ${KEY_LENGTH_MAX} visible ASCII characters.`, { param });
  }
}

/** What makes two requests "the same": route, path parameters and each body field. */
function requestFields(request: FastifyRequest): Record<string, string> {
  const fields: Record<string, string> = {
    $route: sha256Hex(`${request.method} ${request.routeOptions.url ?? request.url} ${canonicalJson(request.params ?? {})}`),
  };
  const body = request.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      // The key itself is not part of "the request": it may come in the header once and the body next.
      if (name !== 'idempotency_key') fields[name] = sha256Hex(canonicalJson(value));
    }
  } else if (body !== undefined) {
    fields['$body'] = sha256Hex(canonicalJson(body));
  }
  return fields;
}

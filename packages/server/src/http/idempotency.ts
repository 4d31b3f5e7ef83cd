import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { canonicalJson, sha256Hex } from '../lib/crypto.js';
import { ApiError } from '../lib/errors.js';
import type { SecretBox } from '../lib/secret-box.js';
import { beginIdempotentRequest, completeIdempotentRequest, type IdempotencyLock, releaseIdempotentRequest } from './idempotency.store.js';

/** How long generic keys are kept (docs/api.md section 1). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A key whose request has not finished after this long is taken to be abandoned by a crash. */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;
const KEY_LENGTH_MAX = 255;
const KEY_PATTERN = /^[\x21-\x7e]+$/;

export interface RouteIdempotency {
  /**
   * `off` for routes that must not take a key at all: the browser-facing identity provider returns
   * (SAML ACS), which no API client sends. Responses that carry a credential are kept, sealed
   * (http/idempotency.sealing.ts), so they need no exception.
   */
  readonly mode?: 'request' | 'off';
  /** Keys are per project; a route may narrow them further (per wallet for credits and debits). */
  readonly scope?: (request: FastifyRequest) => string;
  /** `forever` for ledger operations. */
  readonly retention?: 'day' | 'forever';
  /** The route also takes the key as `idempotency_key` in its body (credit operations). */
  readonly bodyKey?: boolean;
  /**
   * `transaction`: the hook checks the key and fingerprints the request but claims nothing; the
   * handler claims the key inside the operation's own database transaction
   * (`request.idempotencyClaim`, see `IdempotencyClaim`) and sends stored answers itself. Keys
   * are then kept forever. For the ledger, where a separate claim would cost a commit of its own.
   */
  readonly claim?: 'hook' | 'transaction';
}

/** The key a running request holds; a handler that commits its own transaction may settle it there. */
export interface PendingIdempotency {
  readonly lock: IdempotencyLock;
  settled: boolean;
}

export interface IdempotencyOptions {
  readonly db: Db;
  readonly clock: Clock;
  /** The service's keyring: every stored response and request fingerprint is sealed with it. */
  readonly secrets: SecretBox;
}

/**
 * `Idempotency-Key` on any POST (docs/api.md section 1). The preHandler runs after the credential
 * guard and schema validation, so a request refused for those reasons never claims its key and can
 * be corrected and sent again with it. The onSend hook stores the response for replay, or frees the
 * key after a 5xx (the operation rolled back, so running it again is safe and right).
 */
export function idempotencyHooks(options: IdempotencyOptions) {
  async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (request.method !== 'POST') return undefined;
    const config: RouteIdempotency = request.routeOptions.config.idempotency ?? {};
    if (config.mode === 'off') return undefined;
    const key = readIdempotencyKey(request, config.bodyKey === true);
    if (key === undefined || request.principal === undefined) return undefined;

    const fields = requestFields(request);
    const projectId = request.principal.projectId;
    // An end user's keys are kept per user (a session route's default), so two users' keys never meet.
    const scope = config.scope?.(request) ?? (request.principal.kind === 'session' ? `user:${request.principal.userId}` : '');
    const requestHash = sha256Hex(canonicalJson(fields));
    if (config.claim === 'transaction') {
      request.idempotencyClaim = { projectId, scope, key, requestHash, fields, requestId: request.id };
      return undefined;
    }
    const result = await beginIdempotentRequest(options.db.kysely, {
      projectId,
      scope,
      key,
      requestHash,
      fields,
      now: options.clock.now(),
      leaseMs: IDEMPOTENCY_LEASE_MS,
      retentionMs: config.retention === 'forever' ? null : IDEMPOTENCY_RETENTION_MS,
      secrets: options.secrets,
    });
    if (result.kind === 'replay') {
      return reply.code(result.status).header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8').send(result.body);
    }
    request.idempotency = { lock: result.lock, settled: false };
    return undefined;
  }

  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const pending = request.idempotency;
    if (pending === undefined || pending.settled) return payload;
    pending.settled = true;
    if (reply.statusCode >= 500) {
      await releaseIdempotentRequest(options.db.kysely, pending.lock);
    } else {
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
      const stored = await completeIdempotentRequest(options.db.kysely, options.secrets, pending.lock, { status: reply.statusCode, body });
      if (!stored) request.log.warn({ idempotencyKey: pending.lock.key }, 'idempotency lock was lost before the response was stored');
    }
    return payload;
  }

  return { preHandler, onSend };
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

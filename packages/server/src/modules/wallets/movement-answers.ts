import type { FastifyReply } from 'fastify';
import { assert } from '../../lib/assert.js';
import { renderError } from '../../lib/errors.js';
import type { RequestAnswer, StoredAnswer } from '../../lib/idempotency.store.js';
import type { BatchOutcome, MovementOutcome } from '../ledger/ledger.service.js';

/**
 * How the routes of ledger movements answer (wallets, holds, batches): as the exact JSON text the
 * ledger stored with the idempotency key, so that a replay is byte for byte the original.
 */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a movement's outcome: 201 and the transaction, or the refusal. A replay (`Idempotent-Replayed:
 * true`) is rebuilt from the ledger: the same transaction, or the same refusal with the id of the
 * request first answered with it, byte for byte what that request got.
 */
export function sendOutcome(reply: FastifyReply, outcome: MovementOutcome, status = 201): FastifyReply {
  if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
  if (outcome.ok) return reply.code(status).type(JSON_TYPE).send(JSON.stringify(outcome.value));
  if (!outcome.replayed) throw outcome.error;
  return reply
    .code(outcome.error.status)
    .type(JSON_TYPE)
    .send(JSON.stringify(renderError(outcome.error, outcome.requestId ?? reply.request.id)));
}

/**
 * A keyed ledger request's answer (docs/adr/0004-idempotency.md): the one its flush stored with its
 * key, or the one stored under the key before (`Idempotent-Replayed`), or the refusal of a key
 * used for another request.
 */
export function sendLedgerAnswer(reply: FastifyReply, answer: RequestAnswer): FastifyReply {
  if (answer.kind === 'refused') throw answer.error;
  if (answer.kind === 'replayed') void reply.header('Idempotent-Replayed', 'true');
  return reply.code(answer.answer.status).type(JSON_TYPE).send(answer.answer.body);
}

/** A single movement's answer as `sendOutcome` sends it, for a request key to keep. */
export function outcomeAnswer(outcome: BatchOutcome, requestId: string, status: number): StoredAnswer {
  const [one] = outcome.outcomes;
  assert(one !== undefined && outcome.outcomes.length === 1, 'a request of one movement has one outcome');
  if (one.ok) return { status, body: JSON.stringify(one.value) };
  return { status: one.error.status, body: JSON.stringify(renderError(one.error, one.requestId ?? requestId)) };
}

/** A keyed single-movement request (capture, void): its stored answer, or the outcome as `sendOutcome` sends it. */
export function sendKeyedOutcome(reply: FastifyReply, outcome: BatchOutcome, status: number): FastifyReply {
  if (outcome.answer !== undefined) return sendLedgerAnswer(reply, outcome.answer);
  const [one] = outcome.outcomes;
  assert(one !== undefined && outcome.outcomes.length === 1, 'a request of one movement has one outcome');
  return sendOutcome(reply, one, status);
}

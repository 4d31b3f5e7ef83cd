import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { HoldsService } from './holds.service.js';
import {
  CaptureHoldBody,
  CreateHoldBody,
  GrantListSchema,
  HoldListSchema,
  HoldParams,
  HoldSchema,
  ListGrantsQuery,
  ListHoldsQuery,
} from '../ledger/holds.schemas.js';
import type { BatchOutcome, LedgerService } from '../ledger/ledger.service.js';
import { outcomeAnswer, sendKeyedOutcome, sendOutcome } from './movement-answers.js';
import { WalletParams } from './wallets.schemas.js';

/**
 * Holds and grants (docs/api.md section 4, "Holds and grants"). A hold's key is a ledger key, in
 * the per-wallet namespace of credits and debits; a capture or void is keyed by its hold (a second
 * one answers 409 `hold_not_pending`), and an `Idempotency-Key` on it replays the first answer.
 */
export function holdsRoutes(holds: HoldsService, ledger: LedgerService): RouteModule {
  return routeModule('wallets', [
    defineRoute({
      method: 'POST',
      url: '/v1/wallets/:id/holds',
      credential: 'secret',
      idempotency: { bodyKey: true, claim: 'movement' },
      operationId: 'createHold',
      summary: 'Reserve credits: they leave `available` until captured, voided or expired',
      description:
        'Reserves credits of a wallet: they leave `available` at once, and are debited by a capture, released by a void, or released on their own at `expires_at` (`expires_in`, default 7 days). A hold above what is available is 422 `insufficient_credits`.',
      errors: ['resource_missing', 'wallet_frozen', 'wallet_closed', 'insufficient_credits'],
      params: WalletParams,
      body: CreateHoldBody,
      response: { 201: HoldSchema },
      handler: async (request, reply) => {
        const options = { idempotencyKey: request.idempotencyClaim?.key, audit: auditContext(request) };
        const outcome = await ledger.hold(requireSecretKey(request).projectId, request.params.id, request.body, options);
        return sendOutcome(reply, outcome, 201);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/holds/:id/capture',
      credential: 'secret',
      idempotency: { claim: 'ledger', retention: 'forever' },
      operationId: 'captureHold',
      summary: 'Debit all or part of a pending hold; the rest is released',
      description:
        'Debits all of a pending hold, or `amount` of it, and releases the rest; the hold becomes `captured` with `transaction_id` naming the debit. A hold that is not pending is 409 `hold_not_pending`.',
      errors: ['resource_missing', 'hold_not_pending', 'wallet_frozen', 'wallet_closed'],
      params: HoldParams,
      body: CaptureHoldBody,
      response: { 200: HoldSchema },
      // The body is optional (capture all): no body reads as `{}`.
      bodyOptional: true,
      handler: async (request, reply) => {
        const body = request.body;
        const requestKey = request.idempotency?.forLedger((outcome: BatchOutcome) => outcomeAnswer(outcome, request.id, 200));
        const outcome = await ledger.capture(
          requireSecretKey(request).projectId,
          request.params.id,
          body,
          auditContext(request),
          requestKey,
        );
        return sendKeyedOutcome(reply, outcome, 200);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/holds/:id/void',
      credential: 'secret',
      idempotency: { claim: 'ledger', retention: 'forever' },
      operationId: 'voidHold',
      summary: 'Release a pending hold',
      description:
        'Releases a pending hold: its credits are available again and nothing is debited; the hold becomes `voided`. A hold that is not pending is 409 `hold_not_pending`.',
      errors: ['resource_missing', 'hold_not_pending'],
      params: HoldParams,
      response: { 200: HoldSchema },
      handler: async (request, reply) => {
        const requestKey = request.idempotency?.forLedger((outcome: BatchOutcome) => outcomeAnswer(outcome, request.id, 200));
        const outcome = await ledger.void(requireSecretKey(request).projectId, request.params.id, auditContext(request), requestKey);
        return sendKeyedOutcome(reply, outcome, 200);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/holds/:id',
      credential: 'secret',
      operationId: 'getHold',
      summary: 'Retrieve a hold',
      description:
        'A hold with its status; from `expires_at` on a pending hold reads `expired` and holds nothing, even before the expiry job has released it.',
      params: HoldParams,
      response: { 200: HoldSchema },
      handler: (request) => holds.getHold(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id/holds',
      credential: 'secret',
      operationId: 'listHolds',
      summary: "A wallet's holds, newest first",
      description: "The wallet's holds, newest first; `status` narrows them to `pending`, `captured`, `voided` or `expired`.",
      params: WalletParams,
      querystring: ListHoldsQuery,
      response: { 200: HoldListSchema },
      handler: (request) => holds.listHolds(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id/grants',
      credential: 'secret',
      operationId: 'listGrants',
      summary: "A wallet's grants (its credits by priority and expiry), newest first",
      description:
        "The wallet's grants, newest first: each credit with what remains of it, its priority, expiry, category and status (`active`, `depleted`, `expired`).",
      params: WalletParams,
      querystring: ListGrantsQuery,
      response: { 200: GrantListSchema },
      handler: (request) => holds.listGrants(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
  ]);
}

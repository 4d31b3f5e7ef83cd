import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
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
import { outcomeAnswer, sendKeyedOutcome, sendOutcome } from './wallets.routes.js';
import { WalletParams } from './wallets.schemas.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['wallets'];

type WithParams = FastifyRequest<{ Params: { id: string } }>;

/**
 * Holds and grants (docs/api.md section 4, "Holds and grants"). A hold's key is a ledger key, in
 * the per-wallet namespace of credits and debits; a capture or void is keyed by its hold (a second
 * one answers 409 `hold_not_pending`), and an `Idempotency-Key` on it replays the first answer.
 */
export function holdsRoutes(holds: HoldsService, ledger: LedgerService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/wallets/:id/holds',
      {
        config: { credential: 'secret', idempotency: { bodyKey: true, claim: 'movement' } },
        schema: {
          operationId: 'createHold',
          description:
            'Reserves credits of a wallet: they leave `available` at once, and are debited by a capture, released by a void, or released on their own at `expires_at` (`expires_in`, default 7 days). A hold above what is available is 422 `insufficient_credits`.',
          errors: ['resource_missing', 'wallet_frozen', 'wallet_closed', 'insufficient_credits'],
          tags,
          security,
          summary: 'Reserve credits: they leave `available` until captured, voided or expired',
          params: WalletParams,
          body: CreateHoldBody,
          response: { 201: HoldSchema },
        },
      },
      async (request: WithParams, reply) => {
        const options = { idempotencyKey: request.idempotencyClaim?.key, audit: auditContext(request) };
        const outcome = await ledger.hold(requireSecretKey(request).projectId, request.params.id, request.body as CreateHoldBody, options);
        return sendOutcome(reply, outcome, 201);
      },
    );

    app.post<{ Params: { id: string } }>(
      '/v1/holds/:id/capture',
      {
        config: { credential: 'secret', idempotency: { claim: 'ledger', retention: 'forever' } },
        // The body is optional (capture all): no body reads as `{}`.
        preValidation: (request, _reply, done) => {
          request.body ??= {};
          done();
        },
        schema: {
          operationId: 'captureHold',
          description:
            'Debits all of a pending hold, or `amount` of it, and releases the rest; the hold becomes `captured` with `transaction_id` naming the debit. A hold that is not pending is 409 `hold_not_pending`.',
          errors: ['resource_missing', 'hold_not_pending', 'wallet_frozen', 'wallet_closed'],
          tags,
          security,
          summary: 'Debit all or part of a pending hold; the rest is released',
          params: HoldParams,
          body: CaptureHoldBody,
          response: { 200: HoldSchema },
        },
      },
      async (request, reply) => {
        const body = request.body as CaptureHoldBody;
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
    );

    app.post(
      '/v1/holds/:id/void',
      {
        config: { credential: 'secret', idempotency: { claim: 'ledger', retention: 'forever' } },
        schema: {
          operationId: 'voidHold',
          description:
            'Releases a pending hold: its credits are available again and nothing is debited; the hold becomes `voided`. A hold that is not pending is 409 `hold_not_pending`.',
          errors: ['resource_missing', 'hold_not_pending'],
          tags,
          security,
          summary: 'Release a pending hold',
          params: HoldParams,
          response: { 200: HoldSchema },
        },
      },
      async (request: WithParams, reply) => {
        const requestKey = request.idempotency?.forLedger((outcome: BatchOutcome) => outcomeAnswer(outcome, request.id, 200));
        const outcome = await ledger.void(requireSecretKey(request).projectId, request.params.id, auditContext(request), requestKey);
        return sendKeyedOutcome(reply, outcome, 200);
      },
    );

    app.get(
      '/v1/holds/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getHold',
          description:
            'A hold with its status; from `expires_at` on a pending hold reads `expired` and holds nothing, even before the expiry job has released it.',
          tags,
          security,
          summary: 'Retrieve a hold',
          params: HoldParams,
          response: { 200: HoldSchema },
        },
      },
      (request: WithParams) => holds.getHold(requireSecretKey(request).projectId, request.params.id),
    );

    app.get(
      '/v1/wallets/:id/holds',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listHolds',
          description: "The wallet's holds, newest first; `status` narrows them to `pending`, `captured`, `voided` or `expired`.",
          tags,
          security,
          summary: "A wallet's holds, newest first",
          params: WalletParams,
          querystring: ListHoldsQuery,
          response: { 200: HoldListSchema },
        },
      },
      (request: WithParams) => holds.listHolds(requireSecretKey(request).projectId, request.params.id, request.query as ListHoldsQuery),
    );

    app.get(
      '/v1/wallets/:id/grants',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listGrants',
          description:
            "The wallet's grants, newest first: each credit with what remains of it, its priority, expiry, category and status (`active`, `depleted`, `expired`).",
          tags,
          security,
          summary: "A wallet's grants (its credits by priority and expiry), newest first",
          params: WalletParams,
          querystring: ListGrantsQuery,
          response: { 200: GrantListSchema },
        },
      },
      (request: WithParams) => holds.listGrants(requireSecretKey(request).projectId, request.params.id, request.query as ListGrantsQuery),
    );
  };
}

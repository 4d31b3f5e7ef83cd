import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import {
  CreateRecurringGrantBody,
  ListRecurringGrantsQuery,
  RecurringGrantListSchema,
  RecurringGrantParams,
  RecurringGrantSchema,
} from './recurring-grants.schemas.js';
import type { RecurringGrantsService } from './recurring-grants.service.js';
import { WalletParams } from './wallets.schemas.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['wallets'];

type WithParams = FastifyRequest<{ Params: { id: string } }>;

/**
 * Recurring grants (docs/api.md section 4, "Recurring grants"). The create takes an
 * `Idempotency-Key` as every POST does (docs/adr/0004-idempotency.md); its credits are the job's.
 */
export function recurringGrantsRoutes(recurringGrants: RecurringGrantsService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/wallets/:id/recurring-grants',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'createRecurringGrant',
          description:
            'Credits the wallet `amount` once per period (every `interval_count` days, weeks, months or years) from `starts_at` on, exactly once per period whatever the number of processes; with `expires: "period_end"` each period\'s credit expires when the period ends. A frozen or closed wallet refuses it, as a credit.',
          errors: ['resource_missing', 'wallet_frozen', 'wallet_closed'],
          tags,
          security,
          summary: 'Credit a wallet once per period (an allowance), from `starts_at` on',
          params: WalletParams,
          body: CreateRecurringGrantBody,
          response: { 201: RecurringGrantSchema },
        },
      },
      async (request: WithParams, reply) => {
        const body = request.body as CreateRecurringGrantBody;
        const created = await recurringGrants.create(requireSecretKey(request).projectId, request.params.id, body, auditContext(request));
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/wallets/:id/recurring-grants',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listRecurringGrants',
          description: "The wallet's recurring grants, newest first, cancelled ones included, each with `next_grant_at`.",
          tags,
          security,
          summary: "A wallet's recurring grants, newest first",
          params: WalletParams,
          querystring: ListRecurringGrantsQuery,
          response: { 200: RecurringGrantListSchema },
        },
      },
      (request: WithParams) =>
        recurringGrants.list(requireSecretKey(request).projectId, request.params.id, request.query as ListRecurringGrantsQuery),
    );

    app.get(
      '/v1/recurring-grants/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getRecurringGrant',
          description:
            'A recurring grant with its status and `next_grant_at`, the start of the next period it credits (null once cancelled).',
          tags,
          security,
          summary: 'Retrieve a recurring grant',
          params: RecurringGrantParams,
          response: { 200: RecurringGrantSchema },
        },
      },
      (request: WithParams) => recurringGrants.get(requireSecretKey(request).projectId, request.params.id),
    );

    app.delete(
      '/v1/recurring-grants/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'cancelRecurringGrant',
          description:
            'Cancels a recurring grant: no further period is credited, and the credits already made stay. Cancelling a cancelled one changes nothing.',
          errors: ['resource_missing'],
          tags,
          security,
          summary: 'Cancel a recurring grant: no further credits; those made stay',
          params: RecurringGrantParams,
          response: { 200: RecurringGrantSchema },
        },
      },
      (request: WithParams) => recurringGrants.cancel(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );
  };
}

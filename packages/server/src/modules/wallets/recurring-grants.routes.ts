import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
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

/**
 * Recurring grants (docs/api.md section 4, "Recurring grants"). The create takes an
 * `Idempotency-Key` as every POST does (docs/adr/0004-idempotency.md); its credits are the job's.
 */
export function recurringGrantsRoutes(recurringGrants: RecurringGrantsService): RouteModule {
  return routeModule('wallets', [
    defineRoute({
      method: 'POST',
      url: '/v1/wallets/:id/recurring-grants',
      credential: 'secret',
      operationId: 'createRecurringGrant',
      summary: 'Credit a wallet once per period (an allowance), from `starts_at` on',
      description:
        'Credits the wallet `amount` once per period (every `interval_count` days, weeks, months or years) from `starts_at` on, exactly once per period whatever the number of processes; with `expires: "period_end"` each period\'s credit expires when the period ends. A frozen or closed wallet refuses it, as a credit.',
      errors: ['resource_missing', 'wallet_frozen', 'wallet_closed'],
      params: WalletParams,
      body: CreateRecurringGrantBody,
      response: { 201: RecurringGrantSchema },
      handler: async (request, reply) => {
        const body = request.body;
        const created = await recurringGrants.create(requireSecretKey(request).projectId, request.params.id, body, auditContext(request));
        return reply.code(201).send(created);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id/recurring-grants',
      credential: 'secret',
      operationId: 'listRecurringGrants',
      summary: "A wallet's recurring grants, newest first",
      description: "The wallet's recurring grants, newest first, cancelled ones included, each with `next_grant_at`.",
      params: WalletParams,
      querystring: ListRecurringGrantsQuery,
      response: { 200: RecurringGrantListSchema },
      handler: (request) => recurringGrants.list(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/recurring-grants/:id',
      credential: 'secret',
      operationId: 'getRecurringGrant',
      summary: 'Retrieve a recurring grant',
      description: 'A recurring grant with its status and `next_grant_at`, the start of the next period it credits (null once cancelled).',
      params: RecurringGrantParams,
      response: { 200: RecurringGrantSchema },
      handler: (request) => recurringGrants.get(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/recurring-grants/:id',
      credential: 'secret',
      operationId: 'cancelRecurringGrant',
      summary: 'Cancel a recurring grant: no further credits; those made stay',
      description:
        'Cancels a recurring grant: no further period is credited, and the credits already made stay. Cancelling a cancelled one changes nothing.',
      errors: ['resource_missing'],
      params: RecurringGrantParams,
      response: { 200: RecurringGrantSchema },
      handler: (request) => recurringGrants.cancel(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
  ]);
}

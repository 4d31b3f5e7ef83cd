import { Type } from '@sinclair/typebox';
import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { StrictObject } from '../../lib/schemas.js';
import type { StatsService } from './stats.service.js';

/** At most 90 days per series: a bounded scan and a chart that still reads. */
const DAYS_MAX = 90;
const DaysQuery = StrictObject({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: DAYS_MAX, default: 30 })) });
/** Each balance and amount is at most 2^53 - 1; a sum of many may be more (see stats.store `cappedSum`). */
const SUM_CAP =
  'Capped at 9007199254740991 (2^53 - 1): exact below that, that value when the true sum is larger (docs/api.md, Statistics).';
const nullableNumber = Type.Union([Type.Number(), Type.Null()]);

const OverviewSchema = Type.Object(
  {
    object: Type.Literal('stats.overview'),
    users: Type.Integer(),
    wallets: Type.Integer(),
    credits_in_circulation: Type.Integer({
      description: `The sum of every wallet balance. ${SUM_CAP}`,
    }),
    events_today: Type.Integer({ description: 'Events since 00:00 UTC.' }),
    as_of: Type.String({ format: 'date-time' }),
  },
  { $id: 'StatsOverview' },
);
const CreditsSeriesSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        day: Type.String(),
        added: Type.Integer({ description: `Credits added that day. ${SUM_CAP}` }),
        deducted: Type.Integer({ description: `Credits deducted that day. ${SUM_CAP}` }),
        credit_count: Type.Integer(),
        debit_count: Type.Integer(),
      }),
    ),
    has_more: Type.Literal(false),
  },
  { $id: 'StatsCredits' },
);
const WebhooksSeriesSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        day: Type.String(),
        attempts: Type.Integer(),
        succeeded: Type.Integer(),
        success_rate: nullableNumber,
        latency_ms_avg: nullableNumber,
        latency_ms_max: nullableNumber,
      }),
    ),
    has_more: Type.Literal(false),
  },
  { $id: 'StatsWebhooks' },
);

export function statsRoutes(stats: StatsService): RouteModule {
  return routeModule('stats', [
    defineRoute({
      method: 'GET',
      url: '/v1/stats/overview',
      credential: 'secret',
      operationId: 'getStatsOverview',
      summary: 'Users, wallets, credits in circulation, events today',
      description:
        "The project's users, wallets, credits in circulation (the sum of every balance) and events since 00:00 UTC, exact and current. Sums above 2^53 - 1 are capped at that value.",
      response: { 200: OverviewSchema },
      handler: (request) => stats.overview(requireSecretKey(request).projectId),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/stats/credits',
      credential: 'secret',
      operationId: 'getCreditStats',
      summary: 'Credits added and deducted per UTC day, oldest first',
      description:
        'Credits added and deducted per UTC day over the last `days` (1 to 90, default 30), oldest first. Sums above 2^53 - 1 are capped at that value.',
      querystring: DaysQuery,
      response: { 200: CreditsSeriesSchema },
      handler: async (request) => ({
        object: 'list',
        data: await stats.credits(requireSecretKey(request).projectId, request.query.days ?? 30),
        has_more: false,
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/stats/webhooks',
      credential: 'secret',
      operationId: 'getWebhookStats',
      summary: 'Webhook attempts per UTC day: success rate and latency, oldest first',
      description:
        'Webhook attempts per UTC day over the last `days` (1 to 90, default 30), oldest first, with the success rate and latency.',
      querystring: DaysQuery,
      response: { 200: WebhooksSeriesSchema },
      handler: async (request) => ({
        object: 'list',
        data: await stats.webhooks(requireSecretKey(request).projectId, request.query.days ?? 30),
        has_more: false,
      }),
    }),
  ]);
}

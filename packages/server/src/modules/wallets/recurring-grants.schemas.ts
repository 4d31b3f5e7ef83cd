import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { GRANT_PRIORITY_MAX, GRANT_PRIORITY_MIN } from '../ledger/holds.schemas.js';
import {
  AMOUNT_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from '../ledger/ledger.schemas.js';

/** Recurring grants (docs/api.md section 4, "Recurring grants"; docs/adr/0022-recurring-grants.md). */

export const RECURRING_GRANT_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export const INTERVAL_COUNT_MAX = 12;
export const CATEGORY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';

const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description: `Free-form key/value pairs, copied onto every credit. Up to ${METADATA_KEYS_MAX} keys of 1 to ${METADATA_KEY_LENGTH_MAX} characters, each a string of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
});
const Amount = Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Credits per period, a whole number from 1 to 10^12.' });
const Interval = Type.Union(
  RECURRING_GRANT_INTERVALS.map((interval) => Type.Literal(interval)),
  { description: 'The unit of a period; months and years are calendar months anchored on the day of `starts_at`.' },
);
const IntervalCount = Type.Integer({ minimum: 1, maximum: INTERVAL_COUNT_MAX, description: 'Intervals per period, 1 to 12 (default 1).' });
const Expires = Type.Union([Type.Literal('never'), Type.Literal('period_end')], {
  description: "`period_end` (the default): each credit expires when its period ends; `never`: they don't.",
});
const Category = Type.String({ pattern: CATEGORY_PATTERN, description: "The grants' category (default `default`)." });
const Priority = Type.Integer({
  minimum: GRANT_PRIORITY_MIN,
  maximum: GRANT_PRIORITY_MAX,
  description: "The grants' priority, 0 to 100 (default 50): lower is spent first.",
});
const Time = Type.String({ format: 'date-time' });

export const RecurringGrantParams = StrictObject({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `rgr_`.' }),
});

export const CreateRecurringGrantBody = StrictObject({
  amount: Amount,
  interval: Interval,
  interval_count: Type.Optional(IntervalCount),
  starts_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'The start of the first period (default now); may be in the past.' }),
  ),
  expires: Type.Optional(Expires),
  category: Type.Optional(Category),
  priority: Type.Optional(Priority),
  description: Type.Optional(Type.String({ maxLength: DESCRIPTION_LENGTH_MAX, description: 'Copied onto every credit.' })),
  metadata: Type.Optional(Metadata),
});
export type CreateRecurringGrantBody = Static<typeof CreateRecurringGrantBody>;

export const ListRecurringGrantsQuery = StrictObject({ ...ListQuery });
export type ListRecurringGrantsQuery = Static<typeof ListRecurringGrantsQuery>;

export const RecurringGrantSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `rgr_`.' }),
    object: Type.Literal('recurring_grant'),
    wallet_id: Type.String(),
    amount: Amount,
    interval: Interval,
    interval_count: IntervalCount,
    starts_at: Time,
    expires: Expires,
    category: Type.String(),
    priority: Priority,
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('cancelled')]),
    next_grant_at: Type.Union([Time, Type.Null()], {
      description: 'The start of the next period to credit; null once cancelled.',
    }),
    created_at: Time,
    cancelled_at: Type.Union([Time, Type.Null()]),
  },
  { $id: 'RecurringGrant' },
);
export type RecurringGrant = Static<typeof RecurringGrantSchema>;

export const RecurringGrantListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(RecurringGrantSchema), has_more: Type.Boolean() },
  { $id: 'RecurringGrantList' },
);
export type RecurringGrantList = Static<typeof RecurringGrantListSchema>;

import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from './ledger.limits.js';
import { CategoriesSchema } from './ledger.categories.js';

/** Holds and grants (docs/api.md section 4, "Holds and grants"; docs/adr/0018-holds-and-grants.md). */

/** A hold lasts 1 second to 30 days; 7 days unless asked. */
export const HOLD_EXPIRES_IN_SECONDS_MIN = 1;
export const HOLD_EXPIRES_IN_SECONDS_MAX = 2_592_000;
export const HOLD_EXPIRES_IN_SECONDS_DEFAULT = 604_800;
export const GRANT_PRIORITY_MIN = 0;
export const GRANT_PRIORITY_MAX = 100;

const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description: `Free-form key/value pairs. Up to ${METADATA_KEYS_MAX} keys of 1 to ${METADATA_KEY_LENGTH_MAX} characters, each a string of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
});
const Amount = Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Credits, a whole number from 1 to 10^12.' });
const Credits = Type.Integer({ minimum: 0, maximum: BALANCE_MAX });
const Time = Type.String({ format: 'date-time' });
const StringMap = Type.Record(Type.String(), Type.String());

export const HoldParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `hld_`.' }) });

export const CreateHoldBody = StrictObject({
  amount: Amount,
  description: Type.Optional(Type.String({ maxLength: DESCRIPTION_LENGTH_MAX })),
  expires_in: Type.Optional(
    Type.Integer({
      minimum: HOLD_EXPIRES_IN_SECONDS_MIN,
      maximum: HOLD_EXPIRES_IN_SECONDS_MAX,
      description: `Seconds until the hold expires and releases its credits (default ${HOLD_EXPIRES_IN_SECONDS_DEFAULT}, 7 days).`,
    }),
  ),
  metadata: Type.Optional(Metadata),
  idempotency_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Same as the `Idempotency-Key` header; send one or the other, or the same in both.',
    }),
  ),
  categories: Type.Optional(CategoriesSchema),
});
export type CreateHoldBody = Static<typeof CreateHoldBody>;

export const CaptureHoldBody = StrictObject({
  amount: Type.Optional(Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'At most the hold; default all of it.' })),
});
export type CaptureHoldBody = Static<typeof CaptureHoldBody>;

export const HOLD_STATUSES = ['pending', 'captured', 'voided', 'expired'] as const;
const HoldStatus = Type.Union(HOLD_STATUSES.map((status) => Type.Literal(status)));

export const ListHoldsQuery = StrictObject({ ...ListQuery, status: Type.Optional(HoldStatus) });
export type ListHoldsQuery = Static<typeof ListHoldsQuery>;

export const ListGrantsQuery = StrictObject({ ...ListQuery });
export type ListGrantsQuery = Static<typeof ListGrantsQuery>;

export const HoldSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `hld_`.' }),
    object: Type.Literal('hold'),
    wallet_id: Type.String(),
    amount: Amount,
    captured_amount: Type.Integer({ minimum: 0, maximum: AMOUNT_MAX }),
    status: HoldStatus,
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: StringMap,
    transaction_id: Type.Union([Type.String(), Type.Null()], { description: 'The debit its capture made; null until captured.' }),
    expires_at: Time,
    created_at: Time,
    categories: Type.Optional(Type.Array(Type.String(), { description: 'Holds made with `categories`: the categories reserved from.' })),
  },
  { $id: 'Hold' },
);
export type Hold = Static<typeof HoldSchema>;

export const HoldListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(HoldSchema), has_more: Type.Boolean() },
  { $id: 'HoldList' },
);
export type HoldList = Static<typeof HoldListSchema>;

export const GrantSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `grt_`.' }),
    object: Type.Literal('grant'),
    wallet_id: Type.String(),
    amount: Credits,
    remaining: Credits,
    priority: Type.Integer({ minimum: GRANT_PRIORITY_MIN, maximum: GRANT_PRIORITY_MAX, description: 'Lower is spent first.' }),
    expires_at: Type.Union([Time, Type.Null()], { description: 'Null: never expires.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('depleted'), Type.Literal('expired')]),
    created_at: Time,
    category: Type.String({ description: 'The category of the credit that made it (a transferred grant keeps its own).' }),
  },
  { $id: 'Grant' },
);
export type Grant = Static<typeof GrantSchema>;

export const GrantListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(GrantSchema), has_more: Type.Boolean() },
  { $id: 'GrantList' },
);
export type GrantList = Static<typeof GrantListSchema>;

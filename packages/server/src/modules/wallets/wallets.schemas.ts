import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { CategoryBalanceSchema } from './wallets.categories.js';
import { BALANCE_MAX } from './wallets.limits.js';
import {
  CreditLimit,
  Credits,
  Currency,
  Metadata,
  metadataSchema,
  Nullable,
  SignedCredits,
  StringMap,
  Threshold,
  Time,
  WalletId,
} from './wallets.fields.js';

/**
 * The wallets module's schemas, the objects its services return and the source of its part of the
 * OpenAPI document: wallets here, movements and transactions in transactions.schemas.ts, batches
 * in batch.schemas.ts, re-exported so that other files and modules import them from this one.
 */
export {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from './wallets.limits.js';
export { CURRENCY_PATTERN } from './wallets.fields.js';
export * from './transactions.schemas.js';
export * from './batch.schemas.js';

// ---- Requests --------------------------------------------------------------------------------

export const WalletParams = StrictObject({ id: WalletId });

export const CreateWalletBody = StrictObject({
  user_id: Type.String({ pattern: '^usr_[0-9A-Za-z]{22}$', description: 'The owner, a user of the project.' }),
  currency: Currency,
  metadata: Type.Optional(Metadata),
  low_balance_threshold: Type.Optional(Nullable(Threshold)),
  credit_limit: Type.Optional(CreditLimit),
});
export type CreateWalletBody = Static<typeof CreateWalletBody>;

export const UpdateWalletBody = StrictObject({
  metadata: Type.Optional(metadataSchema('Merged into the stored metadata; a key set to "" is removed.')),
  low_balance_threshold: Type.Optional(Nullable(Threshold)),
  credit_limit: Type.Optional(CreditLimit),
});
export type UpdateWalletBody = Static<typeof UpdateWalletBody>;

export const ListWalletsQuery = StrictObject({
  ...ListQuery,
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the wallets of this user.' })),
});
export type ListWalletsQuery = Static<typeof ListWalletsQuery>;

export const BalanceQuery = StrictObject({
  at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'A past time (ISO 8601): the balance after every movement made at or before it; 0 before the first.',
    }),
  ),
});
export type BalanceQuery = Static<typeof BalanceQuery>;

// ---- Responses -------------------------------------------------------------------------------

export const WalletSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `wlt_`.' }),
    object: Type.Literal('wallet'),
    user_id: Type.String(),
    currency: Type.String(),
    balance: SignedCredits,
    available: Type.Integer({
      minimum: -BALANCE_MAX,
      maximum: BALANCE_MAX,
      description:
        'The balance less pending holds and expired grants not yet removed; debits, transfers and new holds may take it down to −`credit_limit`.',
    }),
    credit_limit: CreditLimit,
    debt: Type.Integer({
      minimum: 0,
      maximum: BALANCE_MAX,
      description:
        'What the wallet owes: credits taken beyond its grants, repaid first by the next credits. `balance` = Σ grants `remaining` − `debt`.',
    }),
    status: Type.Union([Type.Literal('active'), Type.Literal('frozen'), Type.Literal('closed')]),
    metadata: StringMap,
    low_balance_threshold: Nullable(Credits),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Wallet' },
);
export type Wallet = Static<typeof WalletSchema>;

export const WalletListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(WalletSchema), has_more: Type.Boolean() },
  { $id: 'WalletList' },
);
export type WalletList = Static<typeof WalletListSchema>;

export const BalanceSchema = Type.Object(
  {
    credits: SignedCredits,
    currency: Type.String(),
    available: Type.Optional(
      Type.Integer({
        minimum: -BALANCE_MAX,
        maximum: BALANCE_MAX,
        description:
          'The credits less pending holds and expired grants, down to −`credit_limit`. Always present, but for a balance asked `?at=` a past time.',
      }),
    ),
    debt: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: BALANCE_MAX,
        description: 'What the wallet owes (docs/adr/0023-credit-limits.md). Always present, but for a balance asked `?at=` a past time.',
      }),
    ),
    credit_limit: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: BALANCE_MAX,
        description: 'How far the balance may go below 0. Always present, but for a balance asked `?at=` a past time.',
      }),
    ),
    at: Type.Optional(
      Type.String({ format: 'date-time', description: 'Present when the balance was asked `?at=` a past time: that time, normalized.' }),
    ),
    categories: Type.Optional(
      Type.Array(CategoryBalanceSchema, {
        description:
          "The credits by category: each category with credits left in unexpired grants, by name, with Σ `remaining` of those grants (pending holds' reservations included). Always present, but for a balance asked `?at=` a past time.",
      }),
    ),
  },
  { $id: 'Balance' },
);
export type Balance = Static<typeof BalanceSchema>;

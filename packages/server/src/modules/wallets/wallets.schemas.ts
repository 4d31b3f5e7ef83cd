import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import {
  BALANCE_MAX,
  CreditLimit,
  Credits,
  Metadata,
  metadataSchema,
  Nullable,
  SignedCredits,
  StringMap,
  Time,
  WalletId,
} from '../ledger/ledger.schemas.js';

/** The movements' shapes are the ledger's (modules/ledger/ledger.schemas.ts); the routes of this module take them from here. */
export {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
  ListTransactionsQuery,
  MovementBody,
  ReverseBody,
  CreditBody,
  TransferBody,
  BalanceSchema,
  type Balance,
  SourceSchema,
  type Source,
  TransactionSchema,
  type Transaction,
  TransferSchema,
  type Transfer,
  WalletTransactionSchema,
  type WalletTransaction,
  WalletTransactionListSchema,
  type WalletTransactionList,
} from '../ledger/ledger.schemas.js';
export * from './batch.schemas.js';

// ---- Building blocks -------------------------------------------------------------------------

/** A wallet's unit: an ISO 4217 code (three upper-case letters) is one case of the custom unit's pattern. */
export const CURRENCY_PATTERN = '^[A-Z][A-Z0-9_]{1,15}$';
const Currency = Type.String({
  pattern: CURRENCY_PATTERN,
  description:
    "The unit of the wallet's credits: an ISO 4217 code (`USD`) or a custom unit of 2 to 16 upper-case letters, digits and underscores starting with a letter (`CREDITS`, `GPU_HOURS`). Amounts are whole numbers of this unit; movements only between wallets of the same unit.",
});
const Threshold = Type.Integer({
  minimum: 0,
  maximum: BALANCE_MAX,
  description: 'A `wallet.balance.low` event is sent when a debit or transfer takes the balance from at or above this to below it.',
});

// ---- Requests --------------------------------------------------------------------------------

export const WalletParams = StrictObject({ id: WalletId });
export const TransactionParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `txn_`.' }) });

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

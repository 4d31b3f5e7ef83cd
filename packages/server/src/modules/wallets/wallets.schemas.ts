import { type Static, type TLiteral, type TSchema, Type } from '@sinclair/typebox';
import { HoldSchema } from '../ledger/holds.schemas.js';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { ActorSchema } from '../audit/audit.schemas.js';
import {
  CATEGORY_DEFAULT,
  CATEGORY_PATTERN,
  CategoriesSchema,
  CategoryBalanceSchema,
  CategorySchema,
} from '../ledger/ledger.categories.js';

import {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from '../ledger/ledger.limits.js';

export { AMOUNT_MAX, BALANCE_MAX, DESCRIPTION_LENGTH_MAX, METADATA_KEY_LENGTH_MAX, METADATA_KEYS_MAX, METADATA_VALUE_LENGTH_MAX };
const WALLET_ID_LENGTH_MAX = 64;

// ---- Building blocks -------------------------------------------------------------------------

/**
 * Written out rather than `Type.Record`, whose key pattern `^(.*)$` lets a key with a line break
 * through unchecked.
 */
function metadataSchema(description: string) {
  return Type.Unsafe<Record<string, string>>({
    type: 'object',
    maxProperties: METADATA_KEYS_MAX,
    propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
    additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
    description: `${description} Up to ${METADATA_KEYS_MAX} keys of 1 to ${METADATA_KEY_LENGTH_MAX} characters, each a string of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
  });
}
const Metadata = metadataSchema('Free-form key/value pairs.');

const Amount = Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Credits, a whole number from 1 to 10^12.' });
/** A wallet's unit: an ISO 4217 code (three upper-case letters) is one case of the custom unit's pattern. */
export const CURRENCY_PATTERN = '^[A-Z][A-Z0-9_]{1,15}$';
const Currency = Type.String({
  pattern: CURRENCY_PATTERN,
  description:
    "The unit of the wallet's credits: an ISO 4217 code (`USD`) or a custom unit of 2 to 16 upper-case letters, digits and underscores starting with a letter (`CREDITS`, `GPU_HOURS`). Amounts are whole numbers of this unit; movements only between wallets of the same unit.",
});
const Credits = Type.Integer({ minimum: 0, maximum: BALANCE_MAX });
/** A balance, which a credit limit lets go below 0 (docs/adr/0023-credit-limits.md). */
const SignedCredits = Type.Integer({ minimum: -BALANCE_MAX, maximum: BALANCE_MAX });
const CreditLimit = Type.Integer({
  minimum: 0,
  maximum: BALANCE_MAX,
  description:
    'How far `balance` and `available` may go below 0 (default 0): debits, captures, outgoing transfers and holds may take them down to −`credit_limit`.',
});
const Repaid = Type.Integer({
  minimum: 0,
  maximum: AMOUNT_MAX,
  description:
    "What a credit or a received transfer repaid of the wallet's debt before making grants (docs/adr/0023-credit-limits.md); 0 for every other movement.",
});
const Threshold = Type.Integer({
  minimum: 0,
  maximum: BALANCE_MAX,
  description: 'A `wallet.balance.low` event is sent when a debit or transfer takes the balance from at or above this to below it.',
});
const Description = Type.String({ maxLength: DESCRIPTION_LENGTH_MAX });
const WalletId = Type.String({ minLength: 1, maxLength: WALLET_ID_LENGTH_MAX, description: 'Begins with `wlt_`.' });
/** Checked again, with its own message, by the idempotency hook; here so the body schema names it. */
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Same as the `Idempotency-Key` header; send one or the other, or the same in both.',
});
const Time = Type.String({ format: 'date-time' });
const StringMap = Type.Record(Type.String(), Type.String());

function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

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

export const ListTransactionsQuery = StrictObject({ ...ListQuery });
export type ListTransactionsQuery = Static<typeof ListTransactionsQuery>;

export const BalanceQuery = StrictObject({
  at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'A past time (ISO 8601): the balance after every movement made at or before it; 0 before the first.',
    }),
  ),
});
export type BalanceQuery = Static<typeof BalanceQuery>;

/** A debit. */
export const MovementBody = StrictObject({
  amount: Amount,
  description: Type.Optional(Description),
  idempotency_key: Type.Optional(IdempotencyKey),
  metadata: Type.Optional(Metadata),
  categories: Type.Optional(CategoriesSchema),
});
export type MovementBody = Static<typeof MovementBody>;

/** A reversal of a credit, debit or transfer (docs/adr/0024-reversals.md). */
export const ReverseBody = StrictObject({
  amount: Type.Optional(
    Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Credits to give back (default: all that is left to reverse).' }),
  ),
  description: Type.Optional(Description),
  idempotency_key: Type.Optional(IdempotencyKey),
  metadata: Type.Optional(Metadata),
});
export type ReverseBody = Static<typeof ReverseBody>;

const Priority = Type.Integer({
  minimum: 0,
  maximum: 100,
  description: "The grant's priority, 0 to 100 (default 50): lower is spent first.",
});
const ExpiresAt = Type.String({
  format: 'date-time',
  description: 'When what is left of the grant expires; a future time. Default: never.',
});

const CreditCategory = Type.String({
  pattern: CATEGORY_PATTERN,
  description: `The grant's category (default \`${CATEGORY_DEFAULT}\`). ${CategorySchema.description ?? ''}`,
});

/** A credit: a movement that makes a grant (docs/adr/0018-holds-and-grants.md). */
export const CreditBody = StrictObject({
  amount: Amount,
  description: Type.Optional(Description),
  idempotency_key: Type.Optional(IdempotencyKey),
  metadata: Type.Optional(Metadata),
  priority: Type.Optional(Priority),
  expires_at: Type.Optional(ExpiresAt),
  category: Type.Optional(CreditCategory),
});
export type CreditBody = Static<typeof CreditBody>;

export const TransferBody = StrictObject({
  from_wallet_id: WalletId,
  to_wallet_id: WalletId,
  amount: Amount,
  description: Type.Optional(Description),
  idempotency_key: Type.Optional(IdempotencyKey),
  categories: Type.Optional(CategoriesSchema),
});
export type TransferBody = Static<typeof TransferBody>;

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

/** A grant a movement drew on (debits, captures, transfers, expiries) or made (credits). */
export const SourceSchema = Type.Object({
  grant_id: Type.String({ description: 'Begins with `grt_`.' }),
  amount: Amount,
  category: Type.String({ description: "The grant's category." }),
});
export type Source = Static<typeof SourceSchema>;
const Sources = Type.Array(SourceSchema, {
  description:
    'Debits, transfers and expiries: the grants drawn on, in order (what they fall short of `amount` was taken on the credit limit, as debt); credits: the grant made (none when the credit only repaid debt); [] before grants existed.',
});

const ReversedAmount = Type.Integer({
  minimum: 0,
  maximum: AMOUNT_MAX,
  description:
    'Credits, debits and transfers read one by one (`GET /transactions/{id}`): what their reversals gave back so far (docs/adr/0024-reversals.md).',
});

/** Who made a transaction: the audit log's actor, and the request (docs/api.md section 4). */
const madeBy = {
  actor: ActorSchema,
  request_id: Nullable(Type.String({ description: 'The request that made it; null for movements made before requests were recorded.' })),
};

/** The fields of a credit or debit, and of a wallet's side of any movement, in the order they are sent. */
function movementFields<T extends TSchema>(type: T) {
  return {
    id: Type.String({ description: 'Begins with `txn_`.' }),
    object: Type.Literal('transaction'),
    type,
    wallet_id: Type.String(),
    amount: Amount,
    balance_after: Type.Integer({
      minimum: -BALANCE_MAX,
      maximum: BALANCE_MAX,
      description: "The wallet's balance after the movement (below 0 only within its credit limit).",
    }),
    description: Nullable(Type.String()),
    metadata: StringMap,
    idempotency_key: Nullable(Type.String()),
    status: Type.Literal('completed'),
    created_at: Time,
    ...madeBy,
    sources: Sources,
    recurring_grant_id: Nullable(
      Type.String({ description: 'Credits of a recurring grant: the recurring grant, `rgr_…`; null otherwise.' }),
    ),
    repaid: Repaid,
    category: Type.Optional(Type.String({ description: 'Credits only: the category of the grant made.' })),
    categories: Type.Optional(Type.Array(Type.String(), { description: 'Debits made with `categories`: the categories drawn on.' })),
    reverses: Type.Optional(Type.String({ description: 'Reversals only: the transaction reversed, `txn_…`.' })),
    reversed_amount: Type.Optional(ReversedAmount),
  };
}

/** A credit, a debit, an expiry or a reversal. */
export const TransactionSchema = Type.Object(
  movementFields(Type.Union([Type.Literal('credit'), Type.Literal('debit'), Type.Literal('expiry'), Type.Literal('reversal')])),
  {
    $id: 'Transaction',
  },
);
export type Transaction = Static<typeof TransactionSchema>;

export const TransferSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `txn_`.' }),
    object: Type.Literal('transfer'),
    status: Type.Literal('completed'),
    from_wallet_id: Type.String(),
    to_wallet_id: Type.String(),
    amount: Amount,
    description: Nullable(Type.String()),
    idempotency_key: Nullable(Type.String()),
    created_at: Time,
    ...madeBy,
    sources: Sources,
    repaid: Repaid,
    categories: Type.Optional(Type.Array(Type.String(), { description: 'Transfers made with `categories`: the categories drawn on.' })),
    reversed_amount: Type.Optional(ReversedAmount),
  },
  { $id: 'Transfer' },
);
export type Transfer = Static<typeof TransferSchema>;

/**
 * An element of a wallet's history: a credit, a debit, or this wallet's side of a transfer, with
 * the other wallet in `counterparty_wallet_id` (transfers only).
 */
export const WalletTransactionSchema = Type.Object(
  {
    ...movementFields(
      Type.Union([
        Type.Literal('credit'),
        Type.Literal('debit'),
        Type.Literal('expiry'),
        Type.Literal('reversal'),
        Type.Literal('transfer_out'),
        Type.Literal('transfer_in'),
      ]),
    ),
    counterparty_wallet_id: Type.Optional(
      Type.String({ description: "The other wallet of a transfer, or of a transfer's reversal; those only." }),
    ),
  },
  { $id: 'WalletTransaction' },
);
export type WalletTransaction = Static<typeof WalletTransactionSchema>;

export const WalletTransactionListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(WalletTransactionSchema), has_more: Type.Boolean() },
  { $id: 'WalletTransactionList' },
);
export type WalletTransactionList = Static<typeof WalletTransactionListSchema>;

// ---- Batches (docs/api.md section 4, "Batches") --------------------------------------------------

export const BATCH_OPERATIONS_MAX = 1000;

function batchWalletId(description: string) {
  return Type.String({ minLength: 1, maxLength: WALLET_ID_LENGTH_MAX, description });
}

/**
 * One operation of a batch. One object for the three types, so a body error names its field
 * (`operations[3].amount`); which wallet fields a type takes is checked by the route.
 */
const BatchOperation = StrictObject({
  type: Type.Union(
    ['credit', 'debit', 'transfer', 'hold', 'capture', 'void', 'reverse'].map((type) => Type.Literal(type)) as [
      TLiteral<'credit'>,
      TLiteral<'debit'>,
      TLiteral<'transfer'>,
      TLiteral<'hold'>,
      TLiteral<'capture'>,
      TLiteral<'void'>,
      TLiteral<'reverse'>,
    ],
  ),
  wallet_id: Type.Optional(batchWalletId('Credits, debits and holds: the wallet.')),
  from_wallet_id: Type.Optional(batchWalletId('Transfers: the wallet the credits leave.')),
  to_wallet_id: Type.Optional(batchWalletId('Transfers: the wallet the credits go to.')),
  hold_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Captures and voids: the hold, `hld_…`.' })),
  transaction_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Reversals: the transaction reversed, `txn_…`.' })),
  amount: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: AMOUNT_MAX,
      description: 'Credits; every type but `void` (optional on `capture` and `reverse`: default all, or all that is left).',
    }),
  ),
  priority: Type.Optional(Priority),
  expires_at: Type.Optional(ExpiresAt),
  category: Type.Optional(CreditCategory),
  categories: Type.Optional(CategoriesSchema),
  expires_in: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2_592_000, description: 'Holds: seconds until the hold expires (default 604,800, 7 days).' }),
  ),
  description: Type.Optional(Description),
  metadata: Type.Optional(Metadata),
  idempotency_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description: "The operation's own key, in the same namespace as the single routes' keys.",
    }),
  ),
});
export type BatchOperation = Static<typeof BatchOperation>;

export const BatchBody = StrictObject({
  operations: Type.Array(BatchOperation, { minItems: 1, maxItems: BATCH_OPERATIONS_MAX }),
  atomic: Type.Optional(Type.Boolean({ description: 'All operations or none (default false: each on its own).' })),
});
export type BatchBody = Static<typeof BatchBody>;

const BatchError = Type.Object({
  type: Type.String(),
  code: Type.String(),
  message: Type.String(),
  param: Type.Optional(Type.String()),
  request_id: Type.String(),
});

export const BatchResultSchema = Type.Object({
  status: Type.Integer({ description: 'What the single route would have answered: 201, 404, 409, 422…' }),
  transaction: Type.Optional(TransactionSchema),
  transfer: Type.Optional(TransferSchema),
  hold: Type.Optional(HoldSchema),
  error: Type.Optional(BatchError),
});
export type BatchResult = Static<typeof BatchResultSchema>;

export const BatchSchema = Type.Object({ object: Type.Literal('batch'), results: Type.Array(BatchResultSchema) }, { $id: 'Batch' });
export type Batch = Static<typeof BatchSchema>;

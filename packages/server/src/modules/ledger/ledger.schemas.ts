import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { ActorSchema } from '../audit/audit.schemas.js';
import { CATEGORY_DEFAULT, CATEGORY_PATTERN, CategoriesSchema, CategoryBalanceSchema, CategorySchema } from './ledger.categories.js';
import {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from './ledger.limits.js';

/**
 * The shapes of the ledger's movements as the API takes and answers them: the bodies of credits,
 * debits, transfers and reversals, a transaction, a transfer, a wallet's history and its balance
 * (holds and grants: holds.schemas.ts). The wallets API (modules/wallets/wallets.schemas.ts) builds
 * its own shapes from the blocks exported here.
 */

export { AMOUNT_MAX, BALANCE_MAX, DESCRIPTION_LENGTH_MAX, METADATA_KEY_LENGTH_MAX, METADATA_KEYS_MAX, METADATA_VALUE_LENGTH_MAX };
export { CATEGORY_DEFAULT, CATEGORY_PATTERN, CategoriesSchema, CategoryBalanceSchema, CategorySchema };
export const WALLET_ID_LENGTH_MAX = 64;

// ---- Building blocks -------------------------------------------------------------------------

/**
 * Written out rather than `Type.Record`, whose key pattern `^(.*)$` lets a key with a line break
 * through unchecked.
 */
export function metadataSchema(description: string) {
  return Type.Unsafe<Record<string, string>>({
    type: 'object',
    maxProperties: METADATA_KEYS_MAX,
    propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
    additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
    description: `${description} Up to ${METADATA_KEYS_MAX} keys of 1 to ${METADATA_KEY_LENGTH_MAX} characters, each a string of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
  });
}
export const Metadata = metadataSchema('Free-form key/value pairs.');

export const Amount = Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description: 'Credits, a whole number from 1 to 10^12.' });
export const Credits = Type.Integer({ minimum: 0, maximum: BALANCE_MAX });
/** A balance, which a credit limit lets go below 0 (docs/adr/0023-credit-limits.md). */
export const SignedCredits = Type.Integer({ minimum: -BALANCE_MAX, maximum: BALANCE_MAX });
export const CreditLimit = Type.Integer({
  minimum: 0,
  maximum: BALANCE_MAX,
  description:
    'How far `balance` and `available` may go below 0 (default 0): debits, captures, outgoing transfers and holds may take them down to −`credit_limit`.',
});
export const Repaid = Type.Integer({
  minimum: 0,
  maximum: AMOUNT_MAX,
  description:
    "What a credit or a received transfer repaid of the wallet's debt before making grants (docs/adr/0023-credit-limits.md); 0 for every other movement.",
});
export const Description = Type.String({ maxLength: DESCRIPTION_LENGTH_MAX });
export const WalletId = Type.String({ minLength: 1, maxLength: WALLET_ID_LENGTH_MAX, description: 'Begins with `wlt_`.' });
/** Checked again, with its own message, by the idempotency hook; here so the body schema names it. */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Same as the `Idempotency-Key` header; send one or the other, or the same in both.',
});
export const Time = Type.String({ format: 'date-time' });
export const StringMap = Type.Record(Type.String(), Type.String());

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

// ---- Requests --------------------------------------------------------------------------------

export const ListTransactionsQuery = StrictObject({ ...ListQuery });
export type ListTransactionsQuery = Static<typeof ListTransactionsQuery>;

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

export const Priority = Type.Integer({
  minimum: 0,
  maximum: 100,
  description: "The grant's priority, 0 to 100 (default 50): lower is spent first.",
});
export const ExpiresAt = Type.String({
  format: 'date-time',
  description: 'When what is left of the grant expires; a future time. Default: never.',
});

export const CreditCategory = Type.String({
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

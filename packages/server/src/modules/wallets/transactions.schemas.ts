import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { ActorSchema } from '../audit/audit.schemas.js';
import { CategoriesSchema } from './wallets.categories.js';
import { AMOUNT_MAX, BALANCE_MAX } from './wallets.limits.js';
import {
  Amount,
  CreditCategory,
  Description,
  ExpiresAt,
  IdempotencyKey,
  Metadata,
  Nullable,
  Priority,
  Repaid,
  StringMap,
  Time,
  WalletId,
} from './wallets.fields.js';

/** Movements (credits, debits, transfers, reversals) and the transactions they make: requests and responses. */

// ---- Requests --------------------------------------------------------------------------------

export const TransactionParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `txn_`.' }) });

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

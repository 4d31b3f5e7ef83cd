import { type Static, type TLiteral, Type } from '@sinclair/typebox';
import { StrictObject } from '../../lib/schemas.js';
import { HoldSchema } from '../ledger/holds.schemas.js';
import {
  AMOUNT_MAX,
  CategoriesSchema,
  CreditCategory,
  Description,
  ExpiresAt,
  Metadata,
  Priority,
  TransactionSchema,
  TransferSchema,
  WALLET_ID_LENGTH_MAX,
} from '../ledger/ledger.schemas.js';

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

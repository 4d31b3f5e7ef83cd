import { type TSchema, Type } from '@sinclair/typebox';
import { CATEGORY_DEFAULT, CATEGORY_PATTERN, CategorySchema } from './wallets.categories.js';
import {
  AMOUNT_MAX,
  BALANCE_MAX,
  DESCRIPTION_LENGTH_MAX,
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from './wallets.limits.js';

/**
 * The building blocks of the wallets module's schemas (wallets.schemas.ts, transactions.schemas.ts,
 * batch.schemas.ts): one definition of each field that several requests and responses share.
 */

export const WALLET_ID_LENGTH_MAX = 64;

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
/** A wallet's unit: an ISO 4217 code (three upper-case letters) is one case of the custom unit's pattern. */
export const CURRENCY_PATTERN = '^[A-Z][A-Z0-9_]{1,15}$';
export const Currency = Type.String({
  pattern: CURRENCY_PATTERN,
  description:
    "The unit of the wallet's credits: an ISO 4217 code (`USD`) or a custom unit of 2 to 16 upper-case letters, digits and underscores starting with a letter (`CREDITS`, `GPU_HOURS`). Amounts are whole numbers of this unit; movements only between wallets of the same unit.",
});
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
export const Threshold = Type.Integer({
  minimum: 0,
  maximum: BALANCE_MAX,
  description: 'A `wallet.balance.low` event is sent when a debit or transfer takes the balance from at or above this to below it.',
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

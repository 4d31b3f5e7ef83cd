import { canonicalJson, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import { type RequestAnswer, type RequestKey, reusedError } from '../../lib/idempotency.store.js';
import type { AuditContext } from '../audit/audit.service.js';
import type { Hold } from './holds.schemas.js';
import type { Transaction, Transfer } from './ledger.schemas.js';
import { CATEGORY_DEFAULT } from './ledger.categories.js';

/**
 * What the ledger's one write path takes and answers (docs/adr/0005-ledger-write-path.md): a
 * list of movements, applied in one database transaction, one outcome per movement. A single
 * request is a batch of one.
 */

/** One movement as asked: a single route's body, or one operation of `POST /v1/wallets/batch`. */
export type MovementRequest =
  | {
      readonly type: 'credit';
      readonly walletId: string;
      readonly amount: number;
      readonly description: string | null;
      readonly metadata: Readonly<Record<string, string>>;
      readonly idempotencyKey: string | undefined;
      /** The grant's priority (0 to 100, lower spent first) and expiry (null: never). */
      readonly priority: number;
      readonly expiresAt: string | null;
      /** The grant's category (docs/adr/0021-categories.md). */
      readonly category: string;
      /** The recurring grant this credit is a period of (docs/adr/0022-recurring-grants.md). */
      readonly recurringGrantId?: string | undefined;
    }
  | {
      readonly type: 'debit';
      readonly walletId: string;
      readonly amount: number;
      readonly description: string | null;
      readonly metadata: Readonly<Record<string, string>>;
      readonly idempotencyKey: string | undefined;
      /** Draw only on grants of these categories; null: on any. */
      readonly categories: readonly string[] | null;
    }
  | {
      /** Reserves credits until captured, voided or `expiresInSeconds` have passed. */
      readonly type: 'hold';
      readonly walletId: string;
      readonly amount: number;
      readonly description: string | null;
      readonly metadata: Readonly<Record<string, string>>;
      readonly idempotencyKey: string | undefined;
      readonly expiresInSeconds: number;
      /** Reserve only grants of these categories; null: any. */
      readonly categories: readonly string[] | null;
    }
  | {
      /** Debits `amount` (undefined: all) of a pending hold and releases the rest. */
      readonly type: 'capture';
      readonly holdId: string;
      readonly amount: number | undefined;
      readonly idempotencyKey?: undefined;
    }
  | { readonly type: 'void'; readonly holdId: string; readonly idempotencyKey?: undefined }
  | {
      /** Locks the wallet and settles what time expired on it (holds and grants), nothing else (the expiry job). */
      readonly type: 'settle';
      readonly walletId: string;
      readonly idempotencyKey?: undefined;
    }
  | {
      /**
       * Gives back `amount` (undefined: all that is left) of a credit, debit, capture's debit or
       * transfer (docs/adr/0024-reversals.md).
       */
      readonly type: 'reverse';
      readonly transactionId: string;
      readonly amount: number | undefined;
      readonly description: string | null;
      readonly metadata: Readonly<Record<string, string>>;
      readonly idempotencyKey: string | undefined;
    }
  | {
      readonly type: 'transfer';
      readonly fromWalletId: string;
      readonly toWalletId: string;
      readonly amount: number;
      readonly description: string | null;
      readonly metadata: Readonly<Record<string, string>>;
      readonly idempotencyKey: string | undefined;
      /** Move only grants of these categories; null: any. */
      readonly categories: readonly string[] | null;
    };

/** Movements of one request: applied in order; `atomic` applies all of them or none. */
export interface LedgerBatch {
  readonly projectId: string;
  /** Who asked: stored on every transaction (`actor`, `request_id`) and on audit entries. */
  readonly context: AuditContext;
  readonly movements: readonly MovementRequest[];
  readonly atomic: boolean;
  /**
   * The request's own idempotency key (a batch's or a capture's `Idempotency-Key`, not a
   * movement's): written with the request's answer in the transaction that applies the batch.
   */
  readonly requestKey?: RequestKey<BatchOutcome> | undefined;
}

/**
 * What became of one movement: the transaction it made (or, `replayed`, the one an earlier request
 * with its key made), or its refusal (`replayed`: the refusal stored with its key, first answered
 * to request `requestId`).
 */
export type MovementOutcome =
  | { readonly ok: true; readonly replayed: boolean; readonly value: LedgerValue }
  | { readonly ok: false; readonly replayed: boolean; readonly error: ApiError; readonly requestId: string | null };

/** What a movement made: a transaction, a transfer, a hold, or (settle) nothing but the settlement. */
export type LedgerValue = Transaction | Transfer | Hold | { readonly object: 'settlement' };

/** A batch's outcomes; for an atomic batch that was refused, the index of the movement that was. */
export interface BatchOutcome {
  readonly outcomes: readonly MovementOutcome[];
  readonly refusedAt: number | undefined;
  /**
   * With a request key: the answer stored with it (`answered`), the one another request stored
   * under it first (`replayed`: nothing of this batch was applied), or why the key could not be
   * used (`refused`: another request under it, nothing applied).
   */
  readonly answer?: RequestAnswer | undefined;
}

/** A movement's fields as the idempotency fingerprint sees them: field name → SHA-256 of its value. */
export type MovementFields = Readonly<Record<string, string>>;

/**
 * The fingerprint of a movement, from its content alone (not its route), so a key first used on a
 * single route replays inside a batch and the other way round. A missing description and null are
 * the same, and so are no metadata and `{}`: the ledger stores them alike.
 */
export function movementFields(movement: KeyedMovement): MovementFields {
  // A reversal asked for all that is left has no amount: its fingerprint says so (null).
  const values: Record<string, unknown> = { type: movement.type, amount: movement.amount ?? null };
  if (movement.type === 'reverse') {
    values['transaction_id'] = movement.transactionId;
  } else if (movement.type === 'transfer') {
    values['from_wallet_id'] = movement.fromWalletId;
    values['to_wallet_id'] = movement.toWalletId;
  } else {
    values['wallet_id'] = movement.walletId;
  }
  if (movement.description !== null) values['description'] = movement.description;
  if (Object.keys(movement.metadata).length > 0) values['metadata'] = movement.metadata;
  // The default priority and no expiry are left out, so keys stored before grants existed still match.
  if (movement.type === 'credit' && movement.priority !== GRANT_PRIORITY_DEFAULT) values['priority'] = movement.priority;
  if (movement.type === 'credit' && movement.expiresAt !== null) values['expires_at'] = movement.expiresAt;
  if (movement.type === 'credit' && movement.recurringGrantId !== undefined) values['recurring_grant_id'] = movement.recurringGrantId;
  if (movement.type === 'hold') values['expires_in'] = movement.expiresInSeconds;
  // Likewise the default category and no restriction; the order a restriction lists its
  // categories in changes nothing the movement does, so it is not part of the fingerprint.
  if (movement.type === 'credit' && movement.category !== CATEGORY_DEFAULT) values['category'] = movement.category;
  if (movement.type !== 'credit' && movement.type !== 'reverse' && movement.categories !== null)
    values['categories'] = [...movement.categories].sort();
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) fields[name] = sha256Hex(canonicalJson(value));
  return fields;
}

export function fieldsHash(fields: MovementFields): string {
  return sha256Hex(canonicalJson(fields));
}

/** The movements that take a ledger idempotency key; captures and voids are keyed by their hold. */
export type KeyedMovement = Extract<MovementRequest, { type: 'credit' | 'debit' | 'transfer' | 'hold' | 'reverse' }>;

export const GRANT_PRIORITY_DEFAULT = 50;

export function isKeyed(movement: MovementRequest): movement is KeyedMovement {
  return (
    movement.type === 'credit' ||
    movement.type === 'debit' ||
    movement.type === 'transfer' ||
    movement.type === 'hold' ||
    movement.type === 'reverse'
  );
}

/**
 * Where a ledger key is unique: per wallet for credits, debits and holds, per project for transfers
 * and reversals (docs/api.md section 1).
 */
export function keyScope(movement: KeyedMovement): string {
  return movement.type === 'transfer' || movement.type === 'reverse' ? '' : movement.walletId;
}

/** 422 `idempotency_key_reused`, naming the first differing field in sorted order (lib/idempotency.store.ts). */
export function keyReused(key: string, asked: MovementFields, stored: MovementFields): ApiError {
  return reusedError(key, asked, stored, { field: 'type', message: 'for another kind of movement' });
}

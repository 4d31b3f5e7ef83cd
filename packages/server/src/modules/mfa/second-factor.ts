import { randomBytes } from 'node:crypto';
import type { Transaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { base32Encode, matchingStep } from './totp.js';
import * as store from './mfa.store.js';

/** What a user presents as a second factor: an authenticator's code or one of the recovery codes. */
export type FactorProof = { readonly code: string } | { readonly recoveryCode: string };
export type MfaMethod = 'totp' | 'recovery_code';

export const RECOVERY_CODES_COUNT = 10;
/** 10 base32 characters, 50 bits each: shown as `xxxxx-xxxxx`. */
const RECOVERY_CODE_BYTES = 7;
const RECOVERY_CODE_LENGTH = 10;
/** Letters and digits, with or without the dash and spaces: what a person may type back. */
const RECOVERY_CODE_INPUT = /^[a-z2-7]{10}$/;

/** The associated data the TOTP secret is sealed with: it binds the sealed value to its user's row. */
export function totpSecretContext(projectId: string, userId: string): string {
  return `mfa_totp:${projectId}:${userId}`;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES_COUNT }, () => {
    const code = base32Encode(randomBytes(RECOVERY_CODE_BYTES)).slice(0, RECOVERY_CODE_LENGTH).toLowerCase();
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** The stored form of a recovery code: SHA-256 of the user and the code without its dash, lower-cased. */
export function recoveryCodeHash(userId: string, code: string): string | undefined {
  const normalized = code.replace(/[\s-]/g, '').toLowerCase();
  if (!RECOVERY_CODE_INPUT.test(normalized)) return undefined;
  return sha256Hex(`${userId}:${normalized}`);
}

/**
 * Checks a second factor of an ACTIVE authenticator in the caller's transaction and uses it up: the
 * code's time step becomes the last accepted one (a replay, or an older code, is refused), or the
 * recovery code is marked used. Answers the method that matched, or undefined.
 */
export async function proveSecondFactorInTransaction(
  trx: Transaction,
  secrets: SecretBox,
  input: { projectId: string; userId: string; proof: FactorProof; now: Date },
): Promise<MfaMethod | undefined> {
  const { projectId, userId, proof, now } = input;
  const factor = await store.findTotp(trx, projectId, userId);
  if (factor?.status !== 'active') return undefined;
  if ('recoveryCode' in proof) {
    const codeHash = recoveryCodeHash(userId, proof.recoveryCode);
    if (codeHash === undefined) return undefined;
    return (await store.useRecoveryCode(trx, { projectId, userId, codeHash, now: isoTime(now) })) ? 'recovery_code' : undefined;
  }
  const secret = secrets.open(factor.secret_sealed, totpSecretContext(projectId, userId));
  const step = matchingStep(secret, proof.code, now);
  if (step === undefined) return undefined;
  return (await store.acceptStep(trx, { projectId, userId, step, status: 'active' })) ? 'totp' : undefined;
}

/** The second factors a user can finish a sign-in with; empty when none is active. */
export async function activeMethodsInTransaction(trx: Transaction, projectId: string, userId: string): Promise<MfaMethod[]> {
  const factor = await store.findTotp(trx, projectId, userId);
  return factor?.status === 'active' ? ['totp', 'recovery_code'] : [];
}

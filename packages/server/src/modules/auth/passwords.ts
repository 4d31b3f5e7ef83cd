import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { hash, type Options, parseOptions, verify } from '@node-rs/argon2';
import { ApiError } from '../../lib/errors.js';

export const PASSWORD_LENGTH_MIN = 8;
export const PASSWORD_LENGTH_MAX = 128;

/** argon2id with the OWASP minimum: m = 19456 KiB, t = 2, p = 1 (docs/api.md section 4). */
export const PASSWORD_HASH_OPTIONS = {
  // The algorithm is left to the library's default, argon2id: its enum is an ambient const enum,
  // which isolated modules cannot read. `needsRehash` checks the stored hash says argon2id.
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const satisfies Options;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** False for a wrong password and for a hash that does not parse; never throws. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** True when a stored hash was made with other parameters than today's; it is recomputed at the next log in. */
export function needsRehash(passwordHash: string): boolean {
  if (!passwordHash.startsWith('$argon2id$')) return true;
  try {
    const options = parseOptions(passwordHash);
    return (
      options.memoryCost !== PASSWORD_HASH_OPTIONS.memoryCost ||
      options.timeCost !== PASSWORD_HASH_OPTIONS.timeCost ||
      options.parallelism !== PASSWORD_HASH_OPTIONS.parallelism
    );
  } catch {
    return true;
  }
}

/**
 * A hash of a random password, verified against when the email is unknown, so that a wrong email
 * costs the same argon2id work as a wrong password and timing does not tell them apart.
 */
export function createDummyPasswordHash(): Promise<string> {
  return hashPassword(randomBytes(32).toString('base64url'));
}

/**
 * The bundled list of common breached passwords: the 49,233 most common passwords of the zxcvbn
 * project's frequency lists (from leaked password corpora), shipped by `@zxcvbn-ts/language-common`
 * (MIT licence). Only the entries a valid password could equal (8 characters or more) are kept.
 * Loaded once, at start.
 */
function loadBreachedPasswords(): ReadonlySet<string> {
  const require = createRequire(import.meta.url);
  const file = require.resolve('@zxcvbn-ts/language-common/src/passwords.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(list)) throw new Error(`${file}: expected a JSON array of passwords`);
  return new Set(list.filter((entry): entry is string => typeof entry === 'string' && entry.length >= PASSWORD_LENGTH_MIN));
}

export const BREACHED_PASSWORDS: ReadonlySet<string> = loadBreachedPasswords();

/**
 * NIST SP 800-63B rules: 8 to 128 characters (counted as Unicode code points), no composition
 * rules, and not on the breached list (compared case-insensitively, as the list is lower case).
 */
export function checkPasswordStrength(password: string, param: string): void {
  // Code points, not UTF-16 units: a surrogate pair (an emoji, say) counts as one character.
  const length = password.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '_').length;
  if (length < PASSWORD_LENGTH_MIN || length > PASSWORD_LENGTH_MAX) {
    throw new ApiError('password_too_weak', `A password is ${PASSWORD_LENGTH_MIN} to ${PASSWORD_LENGTH_MAX} characters long.`, { param });
  }
  if (BREACHED_PASSWORDS.has(password.toLowerCase())) {
    throw new ApiError('password_too_weak', 'This password is on a list of common breached passwords; choose another.', { param });
  }
}

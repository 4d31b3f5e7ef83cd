import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes at or above this are rejected so that every character is equally likely (248 = 4 × 62). */
const UNBIASED_BYTE_LIMIT = 248;

/**
 * Random bytes are drawn from the operating system 4 KiB at a time: one `randomBytes` call per id
 * cost more than the rest of a request id's work (measured in bench/). Bytes are used once.
 */
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset === POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const byte = pool[poolOffset] ?? 0;
  poolOffset += 1;
  return byte;
}

/**
 * The base62 character a random byte stands for, or undefined for a rejected byte: each of the 62
 * characters is the answer for exactly 4 of the 248 accepted bytes, so none is likelier than another.
 */
export function base62CharacterOf(byte: number): string | undefined {
  return byte < UNBIASED_BYTE_LIMIT ? BASE62.charAt(byte % 62) : undefined;
}

/** A random base62 string; each character carries log2(62) ≈ 5.95 bits. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) out += base62CharacterOf(nextRandomByte()) ?? '';
  return out;
}

/** 22 base62 characters = 131 bits of randomness, above the contract's 128. */
export const ID_RANDOM_LENGTH = 22;

export type IdPrefix =
  | 'usr'
  | 'wlt'
  | 'txn'
  | 'evt'
  | 'we'
  | 'del'
  | 'org'
  | 'inv'
  | 'prj'
  | 'key'
  | 'req'
  | 'aud'
  | 'ent'
  | 'eml'
  | 'ssoc'
  | 'pk'
  | 'pkc'
  | 'hld'
  | 'grt'
  | 'rgr';

/**
 * Records appended at the rate of requests: ledger transactions, events, webhook deliveries and
 * audit log entries. Their ids lead with the time, so that each index keyed by them grows at its
 * right edge instead of taking every insert on a page of its own (docs/adr/0013-time-ordered-ids.md).
 */
const TIME_ORDERED: ReadonlySet<IdPrefix> = new Set<IdPrefix>(['txn', 'evt', 'del', 'aud']);

/** Milliseconds since 1970 in 9 base-36 digits, enough until the year 5188. */
export const ID_TIME_LENGTH = 9;
const ID_TIME_MAX = 36 ** ID_TIME_LENGTH - 1;

/**
 * The time part: base 36 in lower case, because digits and lower-case letters sort in the same
 * order under every collation (mixed case does not under a linguistic one such as en_US).
 */
function timePart(milliseconds: number): string {
  return Math.min(Math.max(0, Math.floor(milliseconds)), ID_TIME_MAX)
    .toString(36)
    .padStart(ID_TIME_LENGTH, '0');
}

/**
 * A random, prefixed, URL-safe id such as `wlt_4Qp0…`: 22 random base62 characters (131 bits),
 * led for the time-ordered kinds by 9 characters of the creation time. See docs/adr/0002-id-format.md
 * and docs/adr/0013-time-ordered-ids.md.
 */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  const random = randomBase62(ID_RANDOM_LENGTH);
  return TIME_ORDERED.has(prefix) ? `${prefix}_${timePart(now)}${random}` : `${prefix}_${random}`;
}

/** Ids made before 0013 have no time part; both shapes stay valid. */
const ID_PATTERN = /^[a-z]+_(?:[0-9a-z]{9})?[0-9A-Za-z]{22}$/;

/** True when `value` has the shape of an id with this prefix; says nothing of its existence. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}

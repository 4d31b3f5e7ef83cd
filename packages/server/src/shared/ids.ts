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

/** A random base62 string; each character carries log2(62) ≈ 5.95 bits. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < UNBIASED_BYTE_LIMIT) out += BASE62.charAt(byte % 62);
  }
  return out;
}

/** 22 base62 characters = 131 bits of randomness, above the contract's 128. */
export const ID_RANDOM_LENGTH = 22;

export type IdPrefix =
  'usr' | 'wlt' | 'txn' | 'evt' | 'we' | 'del' | 'org' | 'inv' | 'prj' | 'key' | 'req' | 'aud' | 'ent' | 'eml' | 'ssoc';

/** A random, prefixed, URL-safe id such as `wlt_4Qp0…`. See docs/adr/0002-id-format.md. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{22}$/;

/** True when `value` has the shape of an id with this prefix; says nothing of its existence. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes at or above this are rejected so that every character is equally likely (248 = 4 × 62). */
const UNBIASED_BYTE_LIMIT = 248;

/** A random base62 string; each character carries log2(62) ≈ 5.95 bits. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const byte of bytes) {
      if (byte < UNBIASED_BYTE_LIMIT) out += BASE62.charAt(byte % 62);
      if (out.length === length) break;
    }
  }
  return out;
}

/** 22 base62 characters = 131 bits of randomness, above the contract's 128. */
export const ID_RANDOM_LENGTH = 22;

export type IdPrefix = 'usr' | 'wlt' | 'txn' | 'evt' | 'we' | 'del' | 'org' | 'inv' | 'prj' | 'key' | 'req' | 'aud' | 'ent';

/** A random, prefixed, URL-safe id such as `wlt_4Qp0…`. See docs/adr/0002-id-format.md. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{22}$/;

/** True when `value` has the shape of an id with this prefix; says nothing of its existence. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}

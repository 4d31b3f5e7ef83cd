import { describe, expect, it } from 'vitest';
import { base62CharacterOf, isIdOf, newId, randomBase62 } from './ids.js';

describe('ids', () => {
  it('are prefixed, URL-safe and 22 base62 characters (131 bits) after the prefix', () => {
    const id = newId('wlt');
    expect(id).toMatch(/^wlt_[0-9A-Za-z]{22}$/);
    expect(encodeURIComponent(id)).toBe(id);
    expect(isIdOf('wlt', id)).toBe(true);
    expect(isIdOf('usr', id)).toBe(false);
  });

  it('of appended records lead with 9 base-36 characters of their creation time, then the same 22 random ones', () => {
    const id = newId('txn', Date.UTC(2026, 10, 21));
    expect(id).toMatch(/^txn_[0-9a-z]{9}[0-9A-Za-z]{22}$/);
    expect(isIdOf('txn', id)).toBe(true);
    for (const prefix of ['evt', 'del', 'aud'] as const)
      expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[0-9a-z]{9}[0-9A-Za-z]{22}$`));
    // Sorted as text (in any collation: digits and lower-case letters only), they sort by time.
    const times = [0, 1, 35, 36, 1_000_000, Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1) + 1, Date.UTC(3000, 0, 1)];
    const prefixes = times.map((time) => newId('evt', time).slice(4, 13));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(times.length);
  });

  it('do not repeat, and draw every character of the alphabet from exactly as many bytes', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('txn')));
    expect(ids.size).toBe(10_000);
    // Exact, not sampled: every byte value once. A biased modulo (all 256 bytes taken, % 62) would
    // give the first 8 characters 5 bytes each and the rest 4.
    const bytesPerCharacter = new Map<string, number>();
    const rejected: number[] = [];
    for (let byte = 0; byte < 256; byte += 1) {
      const character = base62CharacterOf(byte);
      if (character === undefined) rejected.push(byte);
      else bytesPerCharacter.set(character, (bytesPerCharacter.get(character) ?? 0) + 1);
    }
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    expect([...bytesPerCharacter.keys()].sort()).toEqual(Array.from({ length: 62 }, (_, index) => alphabet.charAt(index)).sort());
    expect(new Set(bytesPerCharacter.values())).toEqual(new Set([4]));
    expect(rejected).toEqual([248, 249, 250, 251, 252, 253, 254, 255]);
    // And randomBase62 draws from it: only base62 characters, of the length asked for.
    expect(randomBase62(1000)).toMatch(/^[0-9A-Za-z]{1000}$/);
  });
});

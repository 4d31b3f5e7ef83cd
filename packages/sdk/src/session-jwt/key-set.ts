/// <reference types="node" />
import { createPublicKey, type KeyObject, type VerifyKeyObjectInput } from 'node:crypto';
import { SessionJwtError } from '../errors.js';

/**
 * A project's JSON Web Key Set, fetched from `GET /v1/projects/{id}/jwks.json` and held as
 * ready-to-use `KeyObject`s by `kid`, so that verifying a token never imports a key or waits for
 * the network once its key is known.
 *
 * Fetch rules (docs: README "Session JWTs"):
 * - An unknown `kid` fetches the set again, at most once per `refetchIntervalMs` (30 s): a flood of
 *   tokens with made-up `kid`s costs the service one request per 30 s, not one per token.
 * - Past the lifetime the service gave (`Cache-Control: max-age`, bounded to 30 s…1 h), a known
 *   key is still used while the set is fetched again in the background: keys leave the set only
 *   after every token they signed has expired (CONTRACT 9.3), so a stale set never accepts a token
 *   a fresh one would refuse, and the hot path never waits for the network.
 * - One fetch at a time; concurrent callers wait for the same one.
 * - A failed fetch keeps the keys held so far. With no keys at all, fetches are retried at most
 *   once per second and verification fails with `jwks_unavailable` meanwhile.
 */

export type SessionJwtAlgorithm = 'ES256' | 'RS256' | 'EdDSA';

/** A public key and the one algorithm it verifies: a token's `alg` must name it (no alg confusion). */
export interface VerificationKey {
  readonly algorithm: SessionJwtAlgorithm;
  /** Prepared once: ES256 signatures in JWS are r||s (IEEE P1363), not DER. */
  readonly key: KeyObject | VerifyKeyObjectInput;
}

export interface KeySetOptions {
  readonly url: string;
  readonly fetch: typeof globalThis.fetch;
  readonly nowMs: () => number;
  readonly refetchIntervalMs: number;
  readonly fetchTimeoutMs: number;
}

const RETRY_WITHOUT_KEYS_MS = 1_000;
const LIFETIME_DEFAULT_MS = 300_000;
const LIFETIME_MAX_MS = 3_600_000;
const JWKS_BYTES_MAX = 256 * 1024;
const KEYS_MAX = 32;
const RSA_MODULUS_BITS_MIN = 2048;

export class KeySet {
  readonly #options: KeySetOptions;
  #keys = new Map<string, VerificationKey>();
  #loaded = false;
  #expiresAtMs = -Infinity;
  #lastAttemptAtMs = -Infinity;
  #fetching: Promise<void> | undefined;
  #lastError: unknown;

  constructor(options: KeySetOptions) {
    this.#options = options;
  }

  /** The key for `kid` if it is held, without waiting; starts a background refresh when the set is stale. */
  find(kid: string): VerificationKey | undefined {
    const key = this.#keys.get(kid);
    if (key !== undefined && this.#options.nowMs() >= this.#expiresAtMs && this.#mayFetch()) void this.#refresh();
    return key;
  }

  /** The key for `kid`, fetching the set when the rules above allow it. */
  async resolve(kid: string): Promise<VerificationKey> {
    const held = this.find(kid);
    if (held !== undefined) return held;
    if (this.#fetching !== undefined || this.#mayFetch()) await this.#refresh();
    const key = this.#keys.get(kid);
    if (key !== undefined) return key;
    if (!this.#loaded) {
      throw new SessionJwtError('jwks_unavailable', `The signing keys could not be fetched from ${this.#options.url}.`, {
        cause: this.#lastError,
      });
    }
    throw new SessionJwtError('unknown_key', `No key "${kid}" in the project's signing keys.`);
  }

  #mayFetch(): boolean {
    if (this.#fetching !== undefined) return false;
    const interval = this.#loaded ? this.#options.refetchIntervalMs : RETRY_WITHOUT_KEYS_MS;
    return this.#options.nowMs() - this.#lastAttemptAtMs >= interval;
  }

  #refresh(): Promise<void> {
    this.#fetching ??= this.#fetchKeys().finally(() => {
      this.#fetching = undefined;
    });
    return this.#fetching;
  }

  async #fetchKeys(): Promise<void> {
    this.#lastAttemptAtMs = this.#options.nowMs();
    try {
      const response = await this.#options.fetch(this.#options.url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.#options.fetchTimeoutMs),
      });
      if (!response.ok) throw new Error(`GET ${this.#options.url} answered ${response.status}.`);
      if (Number(response.headers.get('content-length') ?? 0) > JWKS_BYTES_MAX) throw new Error('The key set is too large.');
      const text = await response.text();
      if (text.length > JWKS_BYTES_MAX) throw new Error('The key set is too large.');
      this.#keys = parseKeySet(JSON.parse(text) as unknown);
      this.#loaded = true;
      this.#expiresAtMs = this.#options.nowMs() + lifetimeMs(response.headers.get('cache-control'), this.#options.refetchIntervalMs);
      this.#lastError = undefined;
    } catch (error) {
      this.#lastError = error;
    }
  }
}

/** `max-age` in milliseconds, bounded: never refetched more often than the refetch interval, never kept over an hour. */
function lifetimeMs(cacheControl: string | null, minimumMs: number): number {
  const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(cacheControl ?? '')?.[1];
  const requestedMs = maxAge === undefined ? LIFETIME_DEFAULT_MS : Number(maxAge) * 1000;
  return Math.min(LIFETIME_MAX_MS, Math.max(minimumMs, requestedMs));
}

/** The usable signing keys of a JWKS document; keys of other kinds or uses are skipped, not fatal. */
function parseKeySet(document: unknown): Map<string, VerificationKey> {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('The key set has no "keys" array.');
  const parsed = new Map<string, VerificationKey>();
  for (const jwk of keys.slice(0, KEYS_MAX) as unknown[]) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const { kid } = jwk as { kid?: unknown };
    if (typeof kid !== 'string' || kid === '') continue;
    const key = importKey(jwk as Record<string, unknown>);
    if (key !== undefined) parsed.set(kid, key);
  }
  return parsed;
}

function importKey(jwk: Record<string, unknown>): VerificationKey | undefined {
  if (jwk['use'] !== undefined && jwk['use'] !== 'sig') return undefined;
  // A JWK that carries a private part was published by mistake; refuse to depend on it.
  if (jwk['d'] !== undefined) return undefined;
  const algorithm = algorithmOf(jwk);
  if (algorithm === undefined || (jwk['alg'] !== undefined && jwk['alg'] !== algorithm)) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
  if (algorithm === 'RS256' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < RSA_MODULUS_BITS_MIN) return undefined;
  return { algorithm, key: algorithm === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key };
}

function algorithmOf(jwk: Record<string, unknown>): SessionJwtAlgorithm | undefined {
  if (jwk['kty'] === 'EC' && jwk['crv'] === 'P-256') return 'ES256';
  if (jwk['kty'] === 'RSA') return 'RS256';
  if (jwk['kty'] === 'OKP' && (jwk['crv'] === 'Ed25519' || jwk['crv'] === 'Ed448')) return 'EdDSA';
  return undefined;
}

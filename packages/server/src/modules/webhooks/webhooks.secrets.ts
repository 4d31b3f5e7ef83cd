import type { SecretBox } from '../../lib/secret-box.js';

/** How many opened secrets the delivery worker keeps in memory (two per endpoint during a rotation). */
export const OPENED_SECRETS_MAX = 10_000;

/** The associated data of an endpoint's sealed secrets: both its current and its previous secret. */
export function webhookSecretContext(projectId: string, endpointId: string): string {
  return `webhook_endpoint:${projectId}:${endpointId}`;
}

/**
 * Webhook signing secrets are stored sealed (docs/adr/0015-secrets-at-rest.md). The worker signs
 * every attempt, so it opens each sealed secret once and keeps the plaintext in memory, keyed by
 * the sealed value and its associated data (a copied ciphertext is checked again, never served
 * from the cache) and bounded: the least recently used entries go first. A rotation or a re-seal
 * writes a new sealed value, so a stale entry is never used, only aged out.
 */
export class WebhookSecrets {
  readonly #box: SecretBox;
  readonly #opened = new Map<string, string>();
  readonly #entriesMax: number;

  constructor(box: SecretBox, options: { readonly entriesMax?: number } = {}) {
    this.#box = box;
    this.#entriesMax = options.entriesMax ?? OPENED_SECRETS_MAX;
  }

  seal(projectId: string, endpointId: string, secret: string): string {
    return this.#box.seal(secret, webhookSecretContext(projectId, endpointId));
  }

  open(projectId: string, endpointId: string, sealed: string): string {
    const context = webhookSecretContext(projectId, endpointId);
    const cacheKey = `${context}\n${sealed}`;
    const cached = this.#opened.get(cacheKey);
    if (cached !== undefined) {
      // Moved to the end: Map keeps insertion order, so the first entry is the least recently used.
      this.#opened.delete(cacheKey);
      this.#opened.set(cacheKey, cached);
      return cached;
    }
    const secret = this.#box.open(sealed, context);
    this.#opened.set(cacheKey, secret);
    if (this.#opened.size > this.#entriesMax) {
      const oldest = this.#opened.keys().next();
      if (oldest.done !== true) this.#opened.delete(oldest.value);
    }
    return secret;
  }

  /** Entries held, for tests. */
  get size(): number {
    return this.#opened.size;
  }
}

/**
 * Tokens already verified, by their exact string, least recently used first. A hit skips the
 * signature check, the most expensive step, but never outlives the token: an entry at or past its
 * `exp` is dropped, not returned. The string itself is the key, so a token that differs by one
 * character is a miss and is verified in full.
 */
export class VerifiedTokens<Claims extends { readonly exp: number }> {
  readonly #entries = new Map<string, Claims>();
  readonly #sizeMax: number;

  constructor(sizeMax: number) {
    this.#sizeMax = sizeMax;
  }

  get(token: string, nowSeconds: number): Claims | undefined {
    const claims = this.#entries.get(token);
    if (claims === undefined) return undefined;
    this.#entries.delete(token);
    if (claims.exp <= nowSeconds) return undefined;
    // Map keeps insertion order: inserting again makes this entry the most recently used.
    this.#entries.set(token, claims);
    return claims;
  }

  set(token: string, claims: Claims): void {
    if (this.#sizeMax === 0) return;
    if (this.#entries.size >= this.#sizeMax) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(token, claims);
  }

  get size(): number {
    return this.#entries.size;
  }
}

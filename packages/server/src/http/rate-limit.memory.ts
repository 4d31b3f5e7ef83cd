import type { RateLimitDecision, RateLimiter, RateLimitRule } from '../lib/rate-limit.js';

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

/** Buckets kept at most; past it the fullest (least recently used) are dropped, which only forgives. */
const BUCKETS_MAX = 100_000;

/** Token buckets in this process's memory: the default on a single node. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #nowMs: () => number;

  constructor(options: { nowMs?: () => number } = {}) {
    this.#nowMs = options.nowMs ?? Date.now;
  }

  consume(name: string, rule: RateLimitRule): Promise<RateLimitDecision> {
    const nowMs = this.#nowMs();
    let bucket = this.#buckets.get(name);
    if (bucket === undefined) {
      if (this.#buckets.size >= BUCKETS_MAX) this.#evictOldest();
      bucket = { tokens: rule.burst, updatedAtMs: nowMs };
    } else {
      this.#buckets.delete(name); // re-inserted below, so the Map's order is least recently used first
      // A clock that steps back (NTP) adds nothing rather than taking tokens away, as in the Redis script.
      bucket.tokens = Math.min(rule.burst, bucket.tokens + (Math.max(0, nowMs - bucket.updatedAtMs) / 1000) * rule.perSecond);
      bucket.updatedAtMs = nowMs;
    }
    this.#buckets.set(name, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return Promise.resolve(decide(allowed, bucket.tokens, rule));
  }

  close(): Promise<void> {
    this.#buckets.clear();
    return Promise.resolve();
  }

  #evictOldest(): void {
    const evictCount = Math.ceil(BUCKETS_MAX / 10);
    let evicted = 0;
    for (const name of this.#buckets.keys()) {
      this.#buckets.delete(name);
      evicted += 1;
      if (evicted >= evictCount) break;
    }
  }
}

/** The decision and its header values, from the tokens left after this request. */
export function decide(allowed: boolean, tokens: number, rule: RateLimitRule): RateLimitDecision {
  return {
    allowed,
    limit: rule.burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((rule.burst - tokens) / rule.perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rule.perSecond)),
  };
}

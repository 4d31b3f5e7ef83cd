import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LoginThrottle, LoginThrottleLimit } from './login-throttle.js';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.js';

/**
 * Every limit fails closed (docs/security.md, "When Redis is down"): when the shared store (Redis)
 * cannot be reached, a limit goes on being enforced by this process's own in-memory store, with the
 * same rules. An outage of Redis then turns one shared count into one count per process (at most
 * the limit times the number of processes), never into no limit at all, which is what a guesser
 * would wait for.
 *
 * One `StoreFallback` per limiter decides which store answers. After a failure the shared store is
 * left alone for `RETRY_INTERVAL_MS`, so an outage makes one request per interval wait out the
 * command timeout, not every request; then one request tries it again, and the first answer ends
 * the outage.
 * The switch to memory is logged once as a warning, the recovery once as info; every decision made
 * in memory is counted in `rate_limit_store_fallbacks_total`.
 */

/** How long the shared store is left alone after it failed, before one request tries it again. */
export const RETRY_INTERVAL_MS = 1000;

/** The metrics of every limiter's fallback, registered once per registry. */
export interface StoreFallbackMetrics {
  readonly fallbacks: Counter<'limiter'>;
  readonly unreachable: Gauge<'limiter'>;
}

export function createStoreFallbackMetrics(registry: Registry): StoreFallbackMetrics {
  return {
    fallbacks: new Counter({
      name: 'rate_limit_store_fallbacks_total',
      help: "Limit decisions made in this process's memory because the shared store (Redis) could not be reached, by limiter.",
      labelNames: ['limiter'] as const,
      registers: [registry],
    }),
    unreachable: new Gauge({
      name: 'rate_limit_store_unreachable',
      help: 'Whether the limiter is deciding in memory because the shared store (Redis) could not be reached: 1 yes, 0 no.',
      labelNames: ['limiter'] as const,
      registers: [registry],
    }),
  };
}

/** What every store of limits can do: the shared one (Redis) and the local one (memory) alike. */
interface Closable {
  close(): Promise<void>;
}

export interface StoreFallbackOptions<Store extends Closable> {
  /** The limiter's name in logs and metrics: `rate_limit` or `login_throttle`. */
  readonly limiter: string;
  readonly shared: Store;
  readonly local: Store;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  readonly metrics: StoreFallbackMetrics;
  readonly nowMs?: () => number;
}

export class StoreFallback<Store extends Closable> {
  readonly #limiter: string;
  readonly #shared: Store;
  readonly #local: Store;
  readonly #logger: Pick<Logger, 'warn' | 'info'>;
  readonly #fallbacks: { inc(): void };
  readonly #unreachable: { set(value: number): void };
  readonly #nowMs: () => number;
  /** Set while the shared store is unreachable. */
  #outage: { sinceMs: number; nextTryMs: number } | undefined;

  constructor(options: StoreFallbackOptions<Store>) {
    this.#limiter = options.limiter;
    this.#shared = options.shared;
    this.#local = options.local;
    this.#logger = options.logger;
    this.#fallbacks = options.metrics.fallbacks.labels(options.limiter);
    this.#unreachable = options.metrics.unreachable.labels(options.limiter);
    this.#unreachable.set(0);
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Runs `step` on the shared store; while that cannot be reached, on the local one. */
  async run<T>(step: (store: Store) => Promise<T>): Promise<T> {
    const nowMs = this.#nowMs();
    if (this.#outage !== undefined) {
      if (nowMs < this.#outage.nextTryMs) return this.#fallBack(step);
      // This request tries the shared store; the others go on in memory until it has answered.
      this.#outage.nextTryMs = nowMs + RETRY_INTERVAL_MS;
    }
    let result: T;
    try {
      result = await step(this.#shared);
    } catch (error) {
      this.#failed(error);
      return this.#fallBack(step);
    }
    this.#recovered();
    return result;
  }

  /** Runs `step` on the local store only. */
  runLocally<T>(step: (store: Store) => Promise<T>): Promise<T> {
    return step(this.#local);
  }

  async close(): Promise<void> {
    await Promise.all([this.#shared.close(), this.#local.close()]);
  }

  #fallBack<T>(step: (store: Store) => Promise<T>): Promise<T> {
    this.#fallbacks.inc();
    return step(this.#local);
  }

  #failed(error: unknown): void {
    const nowMs = this.#nowMs();
    if (this.#outage !== undefined) {
      this.#outage.nextTryMs = nowMs + RETRY_INTERVAL_MS;
      return;
    }
    this.#outage = { sinceMs: nowMs, nextTryMs: nowMs + RETRY_INTERVAL_MS };
    this.#unreachable.set(1);
    this.#logger.warn(
      { err: error, limiter: this.#limiter },
      "limits: the shared store (Redis) cannot be reached; this process's own counters enforce them until it answers again",
    );
  }

  #recovered(): void {
    if (this.#outage === undefined) return;
    const outageMs = this.#nowMs() - this.#outage.sinceMs;
    this.#outage = undefined;
    this.#unreachable.set(0);
    this.#logger.info({ limiter: this.#limiter, outage_ms: outageMs }, 'limits: the shared store (Redis) answers again and enforces them');
  }
}

/** The request rate limiter in the shared store, or in memory while that cannot be reached. */
export class FallbackRateLimiter implements RateLimiter {
  readonly #stores: StoreFallback<RateLimiter>;

  constructor(stores: StoreFallback<RateLimiter>) {
    this.#stores = stores;
  }

  consume(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision> {
    return this.#stores.run((store) => store.consume(bucket, rule));
  }

  close(): Promise<void> {
    return this.#stores.close();
  }
}

/** The log-in throttle in the shared store, or in memory while that cannot be reached. */
export class FallbackLoginThrottle implements LoginThrottle {
  readonly #stores: StoreFallback<LoginThrottle>;

  constructor(stores: StoreFallback<LoginThrottle>) {
    this.#stores = stores;
  }

  reserve(limits: readonly LoginThrottleLimit[]): Promise<number> {
    return this.#stores.run((store) => store.reserve(limits));
  }

  release(keys: readonly string[]): Promise<void> {
    return this.#stores.run((store) => store.release(keys));
  }

  async clear(key: string): Promise<void> {
    // In memory too, where failures counted during an earlier outage may still be: a success
    // forgets them everywhere, so the next outage does not bring them back.
    await this.#stores.runLocally((store) => store.clear(key));
    await this.#stores.run((store) => store.clear(key));
  }

  close(): Promise<void> {
    return this.#stores.close();
  }
}

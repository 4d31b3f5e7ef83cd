import { Redis } from 'ioredis';
import type { Clock } from '../../shared/clock.js';

/**
 * Counts failed log-in attempts per key (project, email and client IP) in a fixed window: after
 * `failuresMax` failures within `windowSeconds` of the first, the key is refused until the window
 * ends. A success clears the count.
 *
 * Not the request rate limiter's token bucket: that one counts every request, and a log-in limit
 * must be checked before the password is (so a refused attempt learns nothing) while only failures
 * count against it, which a take-one-token bucket cannot express.
 */
export interface LoginThrottle {
  /** Seconds until `key` may try again; 0 when it may try now. */
  retryAfterSeconds(key: string): Promise<number>;
  recordFailure(key: string): Promise<void>;
  clear(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface LoginThrottleRule {
  readonly failuresMax: number;
  readonly windowSeconds: number;
}

/** CONTRACT.md section 1: 10 failures per 15 minutes per (email, IP). */
export const LOGIN_THROTTLE_RULE: LoginThrottleRule = { failuresMax: 10, windowSeconds: 15 * 60 };

/** Keys kept at most; past it the oldest are dropped, which only forgives. */
const ENTRIES_MAX = 100_000;

/** In this process's memory: the default on one node. Time comes from the service's clock. */
export class MemoryLoginThrottle implements LoginThrottle {
  readonly #entries = new Map<string, { failures: number; windowEndsMs: number }>();
  readonly #rule: LoginThrottleRule;
  readonly #clock: Clock;

  constructor(options: { clock: Clock; rule?: LoginThrottleRule }) {
    this.#clock = options.clock;
    this.#rule = options.rule ?? LOGIN_THROTTLE_RULE;
  }

  retryAfterSeconds(key: string): Promise<number> {
    const entry = this.#live(key);
    if (entry === undefined || entry.failures < this.#rule.failuresMax) return Promise.resolve(0);
    return Promise.resolve(Math.max(1, Math.ceil((entry.windowEndsMs - this.#clock.now().getTime()) / 1000)));
  }

  recordFailure(key: string): Promise<void> {
    const entry = this.#live(key);
    if (entry !== undefined) {
      entry.failures += 1;
    } else {
      if (this.#entries.size >= ENTRIES_MAX) this.#evictOldest();
      this.#entries.set(key, { failures: 1, windowEndsMs: this.#clock.now().getTime() + this.#rule.windowSeconds * 1000 });
    }
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.#entries.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    return Promise.resolve();
  }

  #live(key: string): { failures: number; windowEndsMs: number } | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.windowEndsMs <= this.#clock.now().getTime()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #evictOldest(): void {
    let evicted = 0;
    for (const key of this.#entries.keys()) {
      this.#entries.delete(key);
      evicted += 1;
      if (evicted >= ENTRIES_MAX / 10) break;
    }
  }
}

const RECORD_FAILURE_SCRIPT = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return failures
`;

/** The longest a throttle check waits for Redis, as for the request rate limiter. */
const COMMAND_TIMEOUT_MS = 250;

/**
 * Shared by every process through Redis (`REDIS_URL`): one counter per key, created with the
 * window as its time to live. If Redis does not answer, attempts are let through (and the error
 * reported): an outage of Redis should not lock every user out.
 */
export class RedisLoginThrottle implements LoginThrottle {
  readonly #redis: Redis;
  readonly #rule: LoginThrottleRule;
  readonly #keyPrefix: string;
  readonly #onError: (error: unknown) => void;

  constructor(options: { url: string; rule?: LoginThrottleRule; keyPrefix?: string; onError?: (error: unknown) => void }) {
    this.#redis = new Redis(options.url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: COMMAND_TIMEOUT_MS });
    this.#redis.on('error', () => undefined);
    this.#rule = options.rule ?? LOGIN_THROTTLE_RULE;
    this.#keyPrefix = options.keyPrefix ?? 'svc:login-failures:';
    this.#onError = options.onError ?? (() => undefined);
  }

  async retryAfterSeconds(key: string): Promise<number> {
    try {
      const [[, failures], [, ttlMs]] = (await this.#redis.multi().get(this.#key(key)).pttl(this.#key(key)).exec()) as [
        [unknown, string | null],
        [unknown, number],
      ];
      if (failures === null || Number(failures) < this.#rule.failuresMax) return 0;
      return Math.max(1, Math.ceil(ttlMs / 1000));
    } catch (error) {
      this.#onError(error);
      return 0;
    }
  }

  async recordFailure(key: string): Promise<void> {
    try {
      // The window starts at the first failure and later ones do not extend it. A script rather
      // than EXPIRE … NX, which needs Redis 7.
      await this.#redis.eval(RECORD_FAILURE_SCRIPT, 1, this.#key(key), this.#rule.windowSeconds);
    } catch (error) {
      this.#onError(error);
    }
  }

  async clear(key: string): Promise<void> {
    try {
      await this.#redis.del(this.#key(key));
    } catch (error) {
      this.#onError(error);
    }
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }

  #key(key: string): string {
    return `${this.#keyPrefix}${key}`;
  }
}

import { Redis } from 'ioredis';
import type { Clock } from './clock.js';
import { ApiError } from './errors.js';

/**
 * Counts log-in attempts against fixed-window limits (docs/architecture.md, "Log-in throttling").
 *
 * An attempt takes a slot of every limit it falls under BEFORE the password is checked, in one
 * atomic step with the check that each limit has room: concurrent guesses cannot all see room and
 * all go on to a password check. When any limit is full nothing is counted and the attempt is
 * refused, so a refused attempt learns nothing about the password. A wrong password keeps its slot;
 * a right one gives its slots back (`release`), and may forget earlier failures (`clear`).
 *
 * Not the request rate limiter's token bucket: only failures may end up counted, which a
 * take-one-token bucket cannot express.
 */
export interface LoginThrottle {
  /**
   * Takes one slot of every limit and answers 0, or, when any of them is full, takes none and
   * answers the seconds until the last full one has room again.
   */
  reserve(limits: readonly LoginThrottleLimit[]): Promise<number>;
  /** Gives back one slot of each key: the attempt it was reserved for did not fail. */
  release(keys: readonly string[]): Promise<void>;
  /** Forgets a key's count altogether. */
  clear(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface LoginThrottleRule {
  readonly failuresMax: number;
  readonly windowSeconds: number;
}

/** One counter and its rule. The window starts at the counter's first attempt; later ones do not extend it. */
export interface LoginThrottleLimit extends LoginThrottleRule {
  readonly key: string;
}

/** The limits one attempt falls under: a narrow one, cleared by a success, and a wide one, only given back. */
export interface ThrottledAttemptLimits {
  /** Per secret and end-user address (a user's email and IP, say): cleared by a success. */
  readonly narrow: LoginThrottleLimit;
  /** Per secret across all addresses: a success gives its slot back, never clears it. */
  readonly wide: LoginThrottleLimit;
}

/**
 * Runs one check of a secret (a password, a second factor, an emailed code) under the throttle:
 * refused with 429 before `check` runs when a limit is full; `check` answers undefined for a
 * failure, which keeps its slots. A success forgets the failures of the narrow limit and gives back
 * its slot of the wide one, which it does not clear: the owner succeeding must not reset what other
 * addresses have spent. A check that throws was no failure either.
 */
export async function throttledAttempt<T>(
  throttle: LoginThrottle,
  limits: ThrottledAttemptLimits,
  check: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const retryAfterSeconds = await throttle.reserve([limits.narrow, limits.wide]);
  if (retryAfterSeconds > 0) {
    throw new ApiError('rate_limited', `Too many failed attempts; retry in ${retryAfterSeconds} s.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
  let result: T | undefined;
  try {
    result = await check();
  } catch (error) {
    await throttle.release([limits.narrow.key, limits.wide.key]);
    throw error;
  }
  if (result !== undefined) {
    await throttle.clear(limits.narrow.key);
    await throttle.release([limits.wide.key]);
  }
  return result;
}

/** Keys kept at most; past it the oldest are dropped, which only forgives. */
const ENTRIES_MAX = 100_000;

interface Counter {
  attempts: number;
  windowEndsMs: number;
}

/**
 * In this process's memory: the default on one node. Time comes from the service's clock. Each
 * method runs to its end without awaiting, so on one node the check and the count are one step.
 */
export class MemoryLoginThrottle implements LoginThrottle {
  readonly #counters = new Map<string, Counter>();
  readonly #clock: Clock;

  constructor(options: { clock: Clock }) {
    this.#clock = options.clock;
  }

  reserve(limits: readonly LoginThrottleLimit[]): Promise<number> {
    const nowMs = this.#clock.now().getTime();
    let retryAfterMs = 0;
    for (const limit of limits) {
      const counter = this.#live(limit.key, nowMs);
      if (counter !== undefined && counter.attempts >= limit.failuresMax)
        retryAfterMs = Math.max(retryAfterMs, counter.windowEndsMs - nowMs);
    }
    if (retryAfterMs > 0) return Promise.resolve(Math.ceil(retryAfterMs / 1000));
    for (const limit of limits) {
      const counter = this.#live(limit.key, nowMs);
      if (counter !== undefined) {
        counter.attempts += 1;
        continue;
      }
      if (this.#counters.size >= ENTRIES_MAX) this.#evictOldest();
      this.#counters.set(limit.key, { attempts: 1, windowEndsMs: nowMs + limit.windowSeconds * 1000 });
    }
    return Promise.resolve(0);
  }

  release(keys: readonly string[]): Promise<void> {
    const nowMs = this.#clock.now().getTime();
    for (const key of keys) {
      const counter = this.#live(key, nowMs);
      if (counter === undefined) continue;
      counter.attempts -= 1;
      if (counter.attempts <= 0) this.#counters.delete(key);
    }
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.#counters.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#counters.clear();
    return Promise.resolve();
  }

  #live(key: string, nowMs: number): Counter | undefined {
    const counter = this.#counters.get(key);
    if (counter !== undefined && counter.windowEndsMs <= nowMs) {
      this.#counters.delete(key);
      return undefined;
    }
    return counter;
  }

  #evictOldest(): void {
    let evicted = 0;
    for (const key of this.#counters.keys()) {
      this.#counters.delete(key);
      evicted += 1;
      if (evicted >= ENTRIES_MAX / 10) break;
    }
  }
}

/**
 * KEYS: the counters; ARGV: for each counter its maximum and window in milliseconds. Answers 0 when
 * every counter had room and each was incremented (a new one expiring at the end of its window), or
 * the milliseconds until the last full counter expires, having changed nothing.
 */
const RESERVE_SCRIPT = `
local retry_ms = 0
for i, key in ipairs(KEYS) do
  local attempts = tonumber(redis.call('GET', key) or '0')
  if attempts >= tonumber(ARGV[2 * i - 1]) then
    local ttl_ms = redis.call('PTTL', key)
    if ttl_ms < 0 then
      ttl_ms = tonumber(ARGV[2 * i])
      redis.call('PEXPIRE', key, ttl_ms)
    end
    retry_ms = math.max(retry_ms, ttl_ms)
  end
end
if retry_ms > 0 then return retry_ms end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[2 * i]) end
end
return 0
`;

/** KEYS: the counters to give one slot back to; a counter that reaches 0 is deleted. */
const RELEASE_SCRIPT = `
for _, key in ipairs(KEYS) do
  local attempts = tonumber(redis.call('GET', key) or '0')
  if attempts > 1 then redis.call('DECR', key) elseif attempts == 1 then redis.call('DEL', key) end
end
return 0
`;

/** The Lua scripts as ioredis defines them on the client. */
interface ThrottleCommands {
  svcLoginReserve: (...keysThenArguments: Array<string | number>) => Promise<number>;
  svcLoginRelease: (...keys: string[]) => Promise<number>;
}

/** The longest a throttle step waits for Redis, as for the request rate limiter. */
export const COMMAND_TIMEOUT_MS = 250;

/**
 * Shared by every process through Redis (`REDIS_URL`): one counter per key, created with its window
 * as its time to live, checked and incremented by one Lua script (atomic in Redis). Rejects when
 * Redis does not answer within the command timeout; `FallbackLoginThrottle` (lib/store-fallback.ts)
 * then counts in memory, so the throttle never fails open.
 */
export class RedisLoginThrottle implements LoginThrottle {
  readonly #redis: Redis & ThrottleCommands;
  readonly #keyPrefix: string;

  constructor(options: { url: string; keyPrefix?: string }) {
    const redis = new Redis(options.url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: COMMAND_TIMEOUT_MS });
    redis.on('error', () => undefined);
    redis.defineCommand('svcLoginReserve', { lua: RESERVE_SCRIPT });
    redis.defineCommand('svcLoginRelease', { lua: RELEASE_SCRIPT });
    this.#redis = redis as Redis & ThrottleCommands;
    this.#keyPrefix = options.keyPrefix ?? 'svc:login-failures:';
  }

  async reserve(limits: readonly LoginThrottleLimit[]): Promise<number> {
    if (limits.length === 0) return 0;
    const keys = limits.map((limit) => this.#key(limit.key));
    const rules = limits.flatMap((limit) => [limit.failuresMax, limit.windowSeconds * 1000]);
    // ioredis' defined commands take the number of keys from the definition; pass it first when unset.
    const retryAfterMs = await this.#redis.svcLoginReserve(keys.length, ...keys, ...rules);
    return retryAfterMs > 0 ? Math.ceil(retryAfterMs / 1000) : 0;
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#redis.svcLoginRelease(String(keys.length), ...keys.map((key) => this.#key(key)));
  }

  async clear(key: string): Promise<void> {
    await this.#redis.del(this.#key(key));
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }

  #key(key: string): string {
    return `${this.#keyPrefix}${key}`;
  }
}

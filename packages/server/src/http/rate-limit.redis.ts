import { Redis } from 'ioredis';
import { decide } from './rate-limit.memory.js';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '../lib/rate-limit.js';

/**
 * One token bucket per key in a Redis hash, refilled and taken from in a single Lua script so that
 * every node sees the same count. Time comes from Redis (`TIME`), not from the nodes' clocks.
 * Returns the tokens left (as a string, to keep the fraction) and whether this request was allowed.
 */
const TOKEN_BUCKET_SCRIPT = `
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'updated_at')
local tokens = tonumber(state[1])
local updated_at = tonumber(state[2])
if tokens == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + (math.max(0, now - updated_at) / 1000) * rate)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'updated_at', tostring(now))
redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 1000)
return { allowed, tostring(tokens) }
`;

/** The Lua script as ioredis defines it on the client. */
interface TokenBucketCommand {
  svcTokenBucket: (key: string, perSecond: number, burst: number) => Promise<[number, string]>;
}

/** The longest a rate-limit check waits for Redis; normally it answers in well under a millisecond. */
export const COMMAND_TIMEOUT_MS = 250;

export interface RedisRateLimiterOptions {
  readonly url: string;
  /** Namespace of the keys, so several deployments can share one Redis. */
  readonly keyPrefix?: string;
}

/**
 * Rejects when Redis does not answer within the command timeout; `FallbackRateLimiter`
 * (lib/store-fallback.ts) then decides in memory, so a limit never fails open.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #keyPrefix: string;

  constructor(options: RedisRateLimiterOptions) {
    // commandTimeout bounds the wait, queued or sent: a Redis that is down or stalled (accepts the
    // connection but never answers) costs a request at most this long, then it is refused.
    this.#redis = new Redis(options.url, {
      lazyConnect: false,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    this.#redis.defineCommand('svcTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_SCRIPT });
    this.#keyPrefix = options.keyPrefix ?? 'svc:ratelimit:';
    // Connection errors surface as consume()'s rejections; without a listener ioredis would log them.
    this.#redis.on('error', () => undefined);
  }

  async consume(name: string, rule: RateLimitRule): Promise<RateLimitDecision> {
    const redis = this.#redis as unknown as TokenBucketCommand;
    const [allowed, tokens] = await redis.svcTokenBucket(`${this.#keyPrefix}${name}`, rule.perSecond, rule.burst);
    return decide(allowed === 1, Number(tokens), rule);
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
    // QUIT is not answered by a Redis that is down or stalled; close the socket regardless, so the
    // process can exit.
    this.#redis.disconnect();
  }
}

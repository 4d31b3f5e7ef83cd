import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import { type LoginThrottle, MemoryLoginThrottle, RedisLoginThrottle } from '../lib/login-throttle.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import { createStoreFallbackMetrics, FallbackLoginThrottle, FallbackRateLimiter, StoreFallback } from '../lib/store-fallback.js';
import { MemoryRateLimiter } from './rate-limit.memory.js';
import { RedisRateLimiter } from './rate-limit.redis.js';

/** The stores of every limit of the service: the request rate limiter and the log-in throttle. */
export interface LimitStores {
  readonly rateLimiter: RateLimiter;
  /** Log in, second factors, email codes, passkey sign-in and reauthentication count failures here. */
  readonly loginThrottle: LoginThrottle;
  close(): Promise<void>;
}

/**
 * In this process's memory without `REDIS_URL`; with it, in Redis, shared by every process, and in
 * memory while Redis cannot be reached (lib/store-fallback.ts), so no limit ever fails open.
 */
export function createLimitStores(options: {
  readonly redisUrl: string | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metricsRegistry: Registry;
}): LimitStores {
  const { redisUrl, clock, logger } = options;
  // In memory, both limits count time by the service's clock, as everything else does (lib/clock.ts).
  const nowMs = () => clock.now().getTime();
  if (redisUrl === undefined) return withClose(new MemoryRateLimiter({ nowMs }), new MemoryLoginThrottle({ clock }));
  const metrics = createStoreFallbackMetrics(options.metricsRegistry);
  const rateLimiter = new FallbackRateLimiter(
    new StoreFallback<RateLimiter>({
      limiter: 'rate_limit',
      shared: new RedisRateLimiter({ url: redisUrl }),
      local: new MemoryRateLimiter({ nowMs }),
      logger,
      metrics,
    }),
  );
  const loginThrottle = new FallbackLoginThrottle(
    new StoreFallback<LoginThrottle>({
      limiter: 'login_throttle',
      shared: new RedisLoginThrottle({ url: redisUrl }),
      local: new MemoryLoginThrottle({ clock }),
      logger,
      metrics,
    }),
  );
  return withClose(rateLimiter, loginThrottle);
}

function withClose(rateLimiter: RateLimiter, loginThrottle: LoginThrottle): LimitStores {
  return {
    rateLimiter,
    loginThrottle,
    async close() {
      await Promise.all([rateLimiter.close(), loginThrottle.close()]);
    },
  };
}

import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter } from '../http/rate-limit.memory.js';
import { signup, testClock } from '../modules/auth/auth.testing.js';
import { describeEachDialect } from '../test/database.js';
import { redisServerCommand, startTestRedisServer, type TestRedisServer } from '../test/redis-server.js';
import { useTestService } from '../test/service.js';
import { type LoginThrottle, type LoginThrottleLimit, MemoryLoginThrottle } from './login-throttle.js';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.js';
import {
  createStoreFallbackMetrics,
  FallbackLoginThrottle,
  FallbackRateLimiter,
  RETRY_INTERVAL_MS,
  StoreFallback,
  type StoreFallbackMetrics,
} from './store-fallback.js';

interface LogLine {
  level: number;
  msg: string;
  limiter?: string;
}

const WARN = 40;
const INFO = 30;

/** A pino logger whose lines the test reads. */
function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

/** A shared store the test takes down and brings back: it rejects while `down`, and counts its calls. */
class SwitchableStore {
  down = false;
  calls = 0;
  /** When set, calls wait for it: a store that is slow to answer. */
  pending: Promise<void> | undefined;

  async call<T>(step: () => Promise<T>): Promise<T> {
    this.calls += 1;
    if (this.pending !== undefined) await this.pending;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    return step();
  }
}

class SwitchableLoginThrottle implements LoginThrottle {
  readonly store = new SwitchableStore();
  readonly #inner: LoginThrottle;
  constructor(inner: LoginThrottle) {
    this.#inner = inner;
  }
  reserve(limits: readonly LoginThrottleLimit[]): Promise<number> {
    return this.store.call(() => this.#inner.reserve(limits));
  }
  release(keys: readonly string[]): Promise<void> {
    return this.store.call(() => this.#inner.release(keys));
  }
  clear(key: string): Promise<void> {
    return this.store.call(() => this.#inner.clear(key));
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}

class SwitchableRateLimiter implements RateLimiter {
  readonly store = new SwitchableStore();
  readonly #inner = new MemoryRateLimiter();
  consume(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision> {
    return this.store.call(() => this.#inner.consume(bucket, rule));
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}

async function metricValue(metrics: StoreFallbackMetrics, name: 'fallbacks' | 'unreachable', limiter: string): Promise<number> {
  const metric = await metrics[name].get();
  return metric.values.find((value) => value.labels.limiter === limiter)?.value ?? 0;
}

describe('FallbackLoginThrottle', () => {
  let nowMs: number;
  let shared: SwitchableLoginThrottle;
  let throttle: FallbackLoginThrottle;
  let metrics: StoreFallbackMetrics;
  let lines: LogLine[];
  const limit = (key: string): LoginThrottleLimit => ({ key, failuresMax: 3, windowSeconds: 900 });
  const reserveTimes = async (times: number, key: string): Promise<number[]> => {
    const answers: number[] = [];
    for (let i = 0; i < times; i += 1) answers.push(await throttle.reserve([limit(key)]));
    return answers;
  };

  beforeEach(() => {
    nowMs = 1_700_000_000_000;
    const clock = testClock();
    shared = new SwitchableLoginThrottle(new MemoryLoginThrottle({ clock }));
    metrics = createStoreFallbackMetrics(new Registry());
    const captured = capturingLogger();
    lines = captured.lines;
    const local = new MemoryLoginThrottle({ clock });
    const options = { limiter: 'login_throttle', shared, local, logger: captured.logger, metrics, nowMs: () => nowMs };
    throttle = new FallbackLoginThrottle(new StoreFallback<LoginThrottle>(options));
  });

  it('uses the shared store while it answers, with no warning and no fallback counted', async () => {
    expect(await reserveTimes(4, 'up')).toEqual([0, 0, 0, expect.any(Number)]);
    expect(shared.store.calls).toBe(4);
    expect(lines).toEqual([]);
    expect(await metricValue(metrics, 'fallbacks', 'login_throttle')).toBe(0);
    expect(await metricValue(metrics, 'unreachable', 'login_throttle')).toBe(0);
  });

  // Regression: an attempt the shared store did not answer was let through, so an outage of Redis
  // lifted the throttle altogether.
  it('goes on enforcing the same limit in memory when the shared store cannot be reached, warning once', async () => {
    shared.store.down = true;
    const answers = await reserveTimes(30, 'down');
    expect(answers.slice(0, 3)).toEqual([0, 0, 0]);
    expect(answers.slice(3).every((retryAfterSeconds) => retryAfterSeconds > 0)).toBe(true);
    // Tried once; left alone for the retry interval after that.
    expect(shared.store.calls).toBe(1);
    expect(lines.filter((line) => line.level === WARN)).toEqual([
      expect.objectContaining({ limiter: 'login_throttle', msg: expect.stringContaining('cannot be reached') }),
    ]);
    expect(await metricValue(metrics, 'fallbacks', 'login_throttle')).toBe(30);
    expect(await metricValue(metrics, 'unreachable', 'login_throttle')).toBe(1);
  });

  it('tries the shared store again once per interval, and uses it again as soon as it answers', async () => {
    shared.store.down = true;
    await reserveTimes(2, 'k');
    nowMs += RETRY_INTERVAL_MS;
    await reserveTimes(2, 'k'); // one try, still down: no second warning
    expect(shared.store.calls).toBe(2);
    expect(lines.filter((line) => line.level === WARN)).toHaveLength(1);

    shared.store.down = false;
    await reserveTimes(2, 'k'); // inside the interval: still in memory
    expect(shared.store.calls).toBe(2);
    nowMs += RETRY_INTERVAL_MS;
    await reserveTimes(2, 'k');
    expect(shared.store.calls).toBe(4);
    expect(lines.filter((line) => line.level === INFO)).toEqual([
      expect.objectContaining({ limiter: 'login_throttle', msg: expect.stringContaining('answers again') }),
    ]);
    expect(await metricValue(metrics, 'unreachable', 'login_throttle')).toBe(0);
    expect(await metricValue(metrics, 'fallbacks', 'login_throttle')).toBe(6);
  });

  it('sends one try at a time to a store that is slow to answer; the others decide in memory', async () => {
    shared.store.down = true;
    await reserveTimes(1, 'slow');
    nowMs += RETRY_INTERVAL_MS;
    let answer: () => void = () => undefined;
    shared.store.pending = new Promise<void>((resolve) => (answer = resolve));
    const trying = throttle.reserve([limit('slow')]);
    expect(await throttle.reserve([limit('slow')])).toBe(0);
    expect(shared.store.calls).toBe(2);
    answer();
    expect(await trying).toBe(0);
    expect(await throttle.reserve([limit('slow')])).toBeGreaterThan(0); // the third slot in memory
  });

  it('a success forgets the failures counted in memory too, so the next outage does not bring them back', async () => {
    shared.store.down = true;
    await reserveTimes(3, 'cleared');
    shared.store.down = false;
    nowMs += RETRY_INTERVAL_MS;
    await throttle.clear('cleared');
    shared.store.down = true;
    nowMs += RETRY_INTERVAL_MS;
    expect(await reserveTimes(4, 'cleared')).toEqual([0, 0, 0, expect.any(Number)]);
  });
});

describe('FallbackRateLimiter', () => {
  it('goes on enforcing the same token bucket in memory when the shared store cannot be reached', async () => {
    const shared = new SwitchableRateLimiter();
    const metrics = createStoreFallbackMetrics(new Registry());
    const { logger, lines } = capturingLogger();
    const local = new MemoryRateLimiter();
    const limiter = new FallbackRateLimiter(new StoreFallback<RateLimiter>({ limiter: 'rate_limit', shared, local, logger, metrics }));
    const rule: RateLimitRule = { perSecond: 0.25, burst: 3 };
    shared.store.down = true;
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 5; i += 1) decisions.push(await limiter.consume('ip:192.0.2.1', rule));
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions[4]).toMatchObject({ limit: 3, remaining: 0, retryAfterSeconds: 4 });
    expect(lines.filter((line) => line.level === WARN && line.limiter === 'rate_limit')).toHaveLength(1);
    expect(await metricValue(metrics, 'fallbacks', 'rate_limit')).toBe(5);
  });
});

/** The IP rate limit's bucket for these tests, small enough to empty: 3 requests, then one per second. */
const LIMITS = { RATE_LIMIT_IP_PER_SECOND: '1', RATE_LIMIT_IP_BURST: '3' } as const;

describeEachDialect('limits while the Redis they use is killed and restarted', (dialect) => {
  describe.skipIf(redisServerCommand === '')('with a redis-server of its own', () => {
    const env: Record<string, string> = { ...LIMITS };
    const { logger, lines } = capturingLogger();
    let redis: TestRedisServer | undefined;
    let admin: Redis | undefined;
    beforeAll(async () => {
      redis = await startTestRedisServer();
      env['REDIS_URL'] = redis.url;
      admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      admin.on('error', () => undefined);
    });
    afterAll(async () => {
      admin?.disconnect();
      await redis?.stop();
    });
    const ctx = useTestService(dialect, { env, serviceOptions: { logger } });
    const call = (options: InjectOptions) => ctx().service.app.inject(options);
    const login = (email: string, password: string, endUserIp: string): Promise<LightMyRequestResponse> =>
      call({ method: 'POST', url: '/v1/auth/login', headers: { ...ctx().auth, 'x-end-user-ip': endUserIp }, payload: { email, password } });
    const wrongPasswords = async (email: string, endUserIp: string, times: number): Promise<number[]> => {
      const statuses: number[] = [];
      for (let i = 0; i < times; i += 1) statuses.push((await login(email, 'wrong-password', endUserIp)).statusCode);
      return statuses;
    };
    const server = (): TestRedisServer => {
      if (redis === undefined) throw new Error('redis-server runs only inside the tests');
      return redis;
    };
    const counters = async (): Promise<string[]> => (admin === undefined ? [] : admin.keys('svc:login-failures:*'));
    const metricsText = async (): Promise<string> => (await call({ method: 'GET', url: '/metrics' })).body;
    const warnings = (limiter: string): LogLine[] => lines.filter((line) => line.level === WARN && line.limiter === limiter);

    it('refuses the 11th wrong password in Redis, in memory while Redis is killed, and in Redis again once it is back', async () => {
      const account = await signup(call, ctx().secretKey);
      // Redis up: ten failures counted in Redis, then 429.
      expect(await wrongPasswords(account.email, '198.51.100.1', 11)).toEqual([...Array<number>(10).fill(401), 429]);
      expect(await counters()).not.toEqual([]);
      expect(warnings('login_throttle')).toEqual([]);

      await server().kill();
      // Killed: the same limit, in this process's memory. Never 30 × 401.
      const statuses = await wrongPasswords(account.email, '198.51.100.2', 30);
      expect(statuses).toEqual([...Array<number>(10).fill(401), ...Array<number>(20).fill(429)]);
      expect(warnings('login_throttle')).toHaveLength(1);
      // The per-IP request limit too.
      const nope = [];
      for (let i = 0; i < 4; i += 1) nope.push((await call({ method: 'GET', url: '/v1/nope', remoteAddress: '2001:db8:5::1' })).statusCode);
      expect(nope).toEqual([404, 404, 404, 429]);
      expect(warnings('rate_limit')).toHaveLength(1);
      const metrics = await metricsText();
      expect(metrics).toMatch(/^rate_limit_store_fallbacks_total\{limiter="login_throttle"\} ([1-9]\d*)$/m);
      expect(metrics).toMatch(/^rate_limit_store_fallbacks_total\{limiter="rate_limit"\} ([1-9]\d*)$/m);
      expect(metrics).toMatch(/^rate_limit_store_unreachable\{limiter="login_throttle"\} 1$/m);

      await server().restart();
      // Back (and empty: it kept nothing): the next try after the retry interval finds it again,
      // once ioredis has reconnected.
      const other = await signup(call, ctx().secretKey);
      // A failure at a time until one is counted in Redis; the bound only stops a fallback that never
      // ends from hanging the test (tries are RETRY_INTERVAL_MS apart).
      await vi.waitFor(
        async () => {
          if ((await counters()).length > 0) return;
          await login(other.email, 'wrong-password', '198.51.100.3');
          expect(await counters(), 'Redis used again').not.toEqual([]);
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(
        lines.filter((line) => line.level === INFO && line.limiter === 'login_throttle' && line.msg.includes('answers again')),
      ).toHaveLength(1);
      expect(await metricsText()).toMatch(/^rate_limit_store_unreachable\{limiter="login_throttle"\} 0$/m);
      const fallbacksBefore = /^rate_limit_store_fallbacks_total\{limiter="login_throttle"\} (\d+)$/m.exec(await metricsText())?.[1];
      const third = await signup(call, ctx().secretKey);
      expect(await wrongPasswords(third.email, '198.51.100.4', 11)).toEqual([...Array<number>(10).fill(401), 429]);
      expect(/^rate_limit_store_fallbacks_total\{limiter="login_throttle"\} (\d+)$/m.exec(await metricsText())?.[1]).toBe(fallbacksBefore);
      expect(warnings('login_throttle')).toHaveLength(1);
    });
  });
});

import { createServer, type Server, type Socket } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createService, type Service } from '../main.js';
import { randomBase62 } from '../lib/ids.js';
import { describeEachDialect } from '../test/database.js';
import { useTestService } from '../test/service.js';
import { manualClock as manualServiceClock } from '../test/webhook-receiver.js';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '../lib/rate-limit.js';
import { MemoryRateLimiter } from './rate-limit.memory.js';
import { COMMAND_TIMEOUT_MS, RedisRateLimiter } from './rate-limit.redis.js';

const redisUrl = inject('redisUrl');

/** A clock the test moves by hand. */
function manualClock(startMs = 1_700_000_000_000): { nowMs: () => number; advance: (ms: number) => void } {
  let now = startMs;
  return { nowMs: () => now, advance: (ms) => (now += ms) };
}

async function consumeTimes(limiter: RateLimiter, bucket: string, rule: RateLimitRule, times: number): Promise<RateLimitDecision[]> {
  const decisions: RateLimitDecision[] = [];
  for (let i = 0; i < times; i += 1) decisions.push(await limiter.consume(bucket, rule));
  return decisions;
}

describe('MemoryRateLimiter', () => {
  const rule: RateLimitRule = { perSecond: 2, burst: 4 };

  it('allows a burst of `burst` requests, then refuses', async () => {
    const limiter = new MemoryRateLimiter({ nowMs: manualClock().nowMs });
    const decisions = await consumeTimes(limiter, 'a', rule, 5);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, false]);
    expect(decisions.map((decision) => decision.remaining)).toEqual([3, 2, 1, 0, 0]);
    expect(decisions.every((decision) => decision.limit === 4)).toBe(true);
  });

  it('reports reset and retry-after in whole seconds', async () => {
    const limiter = new MemoryRateLimiter({ nowMs: manualClock().nowMs });
    const [first] = await consumeTimes(limiter, 'a', rule, 1);
    // One token missing at 2 per second: full again in 0.5 s, rounded up.
    expect(first).toEqual({ allowed: true, limit: 4, remaining: 3, resetSeconds: 1, retryAfterSeconds: 0 });
    const rest = await consumeTimes(limiter, 'a', rule, 4);
    expect(rest[2]).toEqual({ allowed: true, limit: 4, remaining: 0, resetSeconds: 2, retryAfterSeconds: 0 });
    expect(rest[3]).toEqual({ allowed: false, limit: 4, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
  });

  it('computes retry-after from the refill rate when it is slower than one per second', async () => {
    const clock = manualClock();
    const limiter = new MemoryRateLimiter({ nowMs: clock.nowMs });
    const slow: RateLimitRule = { perSecond: 0.25, burst: 1 };
    expect((await limiter.consume('a', slow)).allowed).toBe(true);
    expect(await limiter.consume('a', slow)).toEqual({ allowed: false, limit: 1, remaining: 0, resetSeconds: 4, retryAfterSeconds: 4 });
    clock.advance(3000); // 0.75 token: still refused, one more second to wait
    expect(await limiter.consume('a', slow)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(1000);
    expect(await limiter.consume('a', slow)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('refills at perSecond and never beyond burst', async () => {
    const clock = manualClock();
    const limiter = new MemoryRateLimiter({ nowMs: clock.nowMs });
    await consumeTimes(limiter, 'a', rule, 4);
    expect((await limiter.consume('a', rule)).allowed).toBe(false);

    clock.advance(499); // 0.998 token
    expect((await limiter.consume('a', rule)).allowed).toBe(false);
    clock.advance(1); // now 1 token
    expect(await limiter.consume('a', rule)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.consume('a', rule)).allowed).toBe(false);

    clock.advance(1000); // 2 tokens
    const afterSecond = await consumeTimes(limiter, 'a', rule, 3);
    expect(afterSecond.map((decision) => decision.allowed)).toEqual([true, true, false]);

    clock.advance(3_600_000); // an hour: capped at burst
    const afterHour = await consumeTimes(limiter, 'a', rule, 5);
    expect(afterHour.map((decision) => decision.allowed)).toEqual([true, true, true, true, false]);
    expect(afterHour[0]).toMatchObject({ remaining: 3 });
  });

  it('keeps buckets independent', async () => {
    const limiter = new MemoryRateLimiter({ nowMs: manualClock().nowMs });
    await consumeTimes(limiter, 'key:a', rule, 4);
    expect((await limiter.consume('key:a', rule)).allowed).toBe(false);
    expect(await limiter.consume('key:b', rule)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.consume('ip:a', rule)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('does not take tokens away when the clock steps back', async () => {
    const clock = manualClock();
    const limiter = new MemoryRateLimiter({ nowMs: clock.nowMs });
    await consumeTimes(limiter, 'a', rule, 2); // 2 left
    clock.advance(-10_000);
    expect(await limiter.consume('a', rule)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('forgets every bucket on close', async () => {
    const limiter = new MemoryRateLimiter({ nowMs: manualClock().nowMs });
    await consumeTimes(limiter, 'a', rule, 5);
    await limiter.close();
    expect(await limiter.consume('a', rule)).toMatchObject({ allowed: true, remaining: 3 });
  });
});

describe.skipIf(redisUrl === '')('RedisRateLimiter', () => {
  const opened: RedisRateLimiter[] = [];
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
  });
  afterAll(async () => {
    await admin.quit();
  });

  /** A limiter in a namespace of its own, so runs and parallel files never share a bucket. */
  function limiterFor(keyPrefix: string): RedisRateLimiter {
    const limiter = new RedisRateLimiter({ url: redisUrl, keyPrefix });
    opened.push(limiter);
    return limiter;
  }
  const uniquePrefix = (): string => `svc:test:ratelimit:${randomBase62(12)}:`;

  it('allows a burst, then refuses with the same header values as in memory', async () => {
    const limiter = limiterFor(uniquePrefix());
    // Slow refill, so the milliseconds between commands do not add a token.
    const rule: RateLimitRule = { perSecond: 0.25, burst: 3 };
    const decisions = await consumeTimes(limiter, 'key:a', rule, 4);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((decision) => decision.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[0]).toMatchObject({ limit: 3, resetSeconds: 4, retryAfterSeconds: 0 });
    expect(decisions[3]).toMatchObject({ limit: 3, resetSeconds: 12, retryAfterSeconds: 4 });
  });

  it('refills at perSecond, by the clock of Redis', async () => {
    const prefix = uniquePrefix();
    const limiter = limiterFor(prefix);
    const rule: RateLimitRule = { perSecond: 10, burst: 2 }; // one token every 100 ms
    const burst = await consumeTimes(limiter, 'key:a', rule, 3);
    expect(burst.map((decision) => decision.allowed)).toEqual([true, true, false]);
    // No fixed wait: ask until a token is back, reading the bucket (tokens, and Redis' time of its
    // last update) before each ask. The allowed one must have found exactly perSecond × the
    // milliseconds since the refused one before it, in Redis' own time, less the token it took.
    const bucket = async () => {
      const [tokens, updatedAt] = await admin.hmget(`${prefix}key:a`, 'tokens', 'updated_at');
      return { tokens: Number(tokens), updatedAtMs: Number(updatedAt) };
    };
    let before = await bucket();
    await expect
      .poll(
        async () => {
          before = await bucket();
          return (await limiter.consume('key:a', rule)).allowed;
        },
        { timeout: 5000, interval: 20 },
      )
      .toBe(true);
    const after = await bucket();
    expect(before.tokens).toBeLessThan(1);
    const refilled = Math.min(rule.burst, before.tokens + ((after.updatedAtMs - before.updatedAtMs) / 1000) * rule.perSecond);
    expect(refilled).toBeGreaterThanOrEqual(1);
    expect(after.tokens).toBeCloseTo(refilled - 1, 9);
  });

  it('keeps buckets independent', async () => {
    const limiter = limiterFor(uniquePrefix());
    const rule: RateLimitRule = { perSecond: 0.25, burst: 2 };
    await consumeTimes(limiter, 'key:a', rule, 2);
    expect((await limiter.consume('key:a', rule)).allowed).toBe(false);
    expect(await limiter.consume('key:b', rule)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('shares one bucket between two limiters, as between two nodes', async () => {
    const prefix = uniquePrefix();
    const nodeA = limiterFor(prefix);
    const nodeB = limiterFor(prefix);
    const rule: RateLimitRule = { perSecond: 0.25, burst: 3 };
    expect(await nodeA.consume('key:shared', rule)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await nodeB.consume('key:shared', rule)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await nodeA.consume('key:shared', rule)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await nodeB.consume('key:shared', rule)).allowed).toBe(false);
    expect((await nodeA.consume('key:shared', rule)).allowed).toBe(false);
  });

  it('stores each bucket under the prefix with an expiry', async () => {
    const prefix = uniquePrefix();
    const limiter = limiterFor(prefix);
    await limiter.consume('key:a', { perSecond: 10, burst: 20 });
    const ttl = await admin.pttl(`${prefix}key:a`);
    // Expires once the bucket would be full again (2 s) plus a second.
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3000);
  });
});

describe('RedisRateLimiter when Redis does not answer', () => {
  let server: Server;
  let url = '';
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts connections and reads commands, but never replies: a stalled or partitioned Redis.
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    url = `redis://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  // Regression: a check that Redis did not answer was allowed, so an outage of Redis lifted every
  // limit. It rejects now, and FallbackRateLimiter decides in memory (lib/store-fallback.test.ts).
  // A request waits for its rate-limit check, so a check must give up within the command timeout
  // rather than after ioredis' reconnection backoff (up to 2 s per retry). Each check is timed from
  // its own call; the bound is the command timeout with room for a loaded machine.
  const CHECK_MS_MAX = 4 * COMMAND_TIMEOUT_MS;

  async function timed(work: () => Promise<unknown>): Promise<number> {
    const started = performance.now();
    await work();
    return performance.now() - started;
  }

  it('rejects each check within the command timeout when Redis refuses connections', async () => {
    // A port nothing listens on.
    const limiter = new RedisRateLimiter({ url: 'redis://127.0.0.1:1' });
    try {
      const rule: RateLimitRule = { perSecond: 1, burst: 3 };
      for (let i = 0; i < 4; i += 1) {
        const checkMs = await timed(() => expect(limiter.consume('key:a', rule)).rejects.toBeInstanceOf(Error));
        expect(checkMs).toBeLessThan(CHECK_MS_MAX);
      }
    } finally {
      await limiter.close();
    }
  });

  it('rejects within the command timeout when Redis accepts but never replies, and closes', async () => {
    const limiter = new RedisRateLimiter({ url });
    let closeMs = Infinity;
    try {
      const checkMs = await timed(() => expect(limiter.consume('key:a', { perSecond: 1, burst: 3 })).rejects.toBeInstanceOf(Error));
      expect(checkMs).toBeLessThan(CHECK_MS_MAX);
    } finally {
      // QUIT is never answered either: closing must not wait for it.
      closeMs = await timed(() => limiter.close());
    }
    expect(closeMs).toBeLessThan(CHECK_MS_MAX);
  });
});

const LIMITS = {
  RATE_LIMIT_KEY_PER_SECOND: '5',
  RATE_LIMIT_KEY_BURST: '5',
  RATE_LIMIT_IP_PER_SECOND: '3',
  RATE_LIMIT_IP_BURST: '3',
} as const;

/** An address no other test of this file uses, so each starts with full IP buckets. */
function uniqueIp(): string {
  const octet = (): number => Math.floor(Math.random() * 250) + 1;
  return `10.${octet()}.${octet()}.${octet()}`;
}

function errorOf(response: LightMyRequestResponse): { code: string; type: string; request_id: string } {
  return response.json<{ error: { code: string; type: string; request_id: string } }>().error;
}

function expectRateLimited(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(429);
  expect(errorOf(response)).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error', request_id: response.headers['request-id'] });
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(response.headers['ratelimit-remaining']).toBe('0');
}

describeEachDialect('rate limits over HTTP', (dialect) => {
  // In memory, the limits count time by the service's clock: the tests move it instead of waiting.
  const clock = manualServiceClock();
  const current = useTestService(dialect, { env: LIMITS, serviceOptions: { clock } });

  async function newKey(): Promise<string> {
    const { projectId, service } = current();
    return (await service.projects.createKey(projectId)).secretKey;
  }

  function getProject(key: string, remoteAddress = '127.0.0.1'): Promise<LightMyRequestResponse> {
    return current().service.app.inject({ method: 'GET', url: '/v1/project', headers: { authorization: `Bearer ${key}` }, remoteAddress });
  }

  it('sends RateLimit headers and refuses the 6th request of a burst with 429', async () => {
    const key = await newKey();
    const first = await getProject(key);
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('5');
    expect(first.headers['ratelimit-remaining']).toBe('4');
    expect(first.headers['ratelimit-reset']).toBe('1');
    for (let i = 0; i < 4; i += 1) expect((await getProject(key)).statusCode).toBe(200);

    const sixth = await getProject(key);
    expectRateLimited(sixth);
    expect(sixth.headers['retry-after']).toBe('1');

    // At 5 per second, one token is back 200 ms later, and not a millisecond sooner.
    clock.advance(199);
    expectRateLimited(await getProject(key));
    clock.advance(1);
    const later = await getProject(key);
    expect(later.statusCode).toBe(200);
    expect(later.headers['ratelimit-remaining']).toBe('0');
  });

  it('gives each key of a project its own bucket', async () => {
    const [keyA, keyB] = [await newKey(), await newKey()];
    for (let i = 0; i < 5; i += 1) expect((await getProject(keyA)).statusCode).toBe(200);
    expectRateLimited(await getProject(keyA));
    const other = await getProject(keyB);
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('4');
  });

  it('limits public routes per client IP', async () => {
    const ip = uniqueIp();
    const otherIp = uniqueIp();
    const { app } = current().service;
    for (let i = 0; i < 3; i += 1) {
      const response = await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip });
      expect(response.statusCode).toBe(404);
      expect(errorOf(response).code).toBe('route_not_found');
      expect(response.headers['ratelimit-limit']).toBe('3');
      expect(response.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    expectRateLimited(await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip }));
    // Another client is not affected, and neither are secret-key routes from the same client.
    expect((await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: otherIp })).statusCode).toBe(404);
    expect((await getProject(current().secretKey, ip)).statusCode).toBe(200);
  });

  it('limits an IPv6 client by its /64', async () => {
    const { app } = current().service;
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    for (let i = 0; i < 3; i += 1)
      expect((await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: `${prefix}::${i + 1}` })).statusCode).toBe(404);
    expectRateLimited(await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: `${prefix}:ab:cd:ef:12` }));
    // The next /64 has a bucket of its own.
    const next = await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: `${prefix.slice(0, -1)}2::1` });
    expect(next.statusCode).toBe(404);
    expect(next.headers['ratelimit-remaining']).toBe('2');
  });

  it('never limits the operational routes', async () => {
    const ip = uniqueIp();
    const { app } = current().service;
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      for (let i = 0; i < 6; i += 1) {
        const response = await app.inject({ method: 'GET', url, remoteAddress: ip });
        expect(response.statusCode, url).toBe(200);
        expect(response.headers['ratelimit-limit'], url).toBeUndefined();
      }
    }
    // They did not spend the client's IP bucket either.
    const response = await app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip });
    expect(response.headers['ratelimit-remaining']).toBe('2');
  });

  it('charges failed key attempts to the client IP: 401s, then 429', async () => {
    const ip = uniqueIp();
    const wrongKey = `svc_sk_${randomBase62(43)}`;
    for (let i = 0; i < 3; i += 1) {
      const response = await getProject(wrongKey, ip);
      expect(response.statusCode).toBe(401);
      expect(errorOf(response).code).toBe('invalid_api_key');
    }
    expectRateLimited(await getProject(wrongKey, ip));
    // Leaving the key out altogether is charged the same.
    expectRateLimited(await current().service.app.inject({ method: 'GET', url: '/v1/project', remoteAddress: ip }));
    // A valid key from that address is still served.
    expect((await getProject(current().secretKey, ip)).statusCode).toBe(200);
  });
});

describeEachDialect('rate limits over HTTP with RATE_LIMIT_KEY_PER_SECOND=0', (dialect) => {
  const current = useTestService(dialect, { env: { ...LIMITS, RATE_LIMIT_KEY_PER_SECOND: '0' } });

  it('does not limit secret keys, and still limits public routes per IP', async () => {
    const { service, auth } = current();
    const ip = uniqueIp();
    for (let i = 0; i < 20; i += 1) {
      const response = await service.app.inject({ method: 'GET', url: '/v1/project', headers: auth, remoteAddress: ip });
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-limit']).toBeUndefined();
    }
    for (let i = 0; i < 3; i += 1) {
      expect((await service.app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip })).statusCode).toBe(404);
    }
    expectRateLimited(await service.app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip }));
  });
});

describeEachDialect('rate limits over HTTP with REDIS_URL', (dialect) => {
  describe.skipIf(redisUrl === '')('two service instances', () => {
    // The same bursts, refilled at 1 a second: Redis's clock is real time, and the requests of a
    // test must all fall inside one refill (at 5 a second, 200 ms: too short on a loaded machine).
    const current = useTestService(dialect, {
      env: { ...LIMITS, RATE_LIMIT_KEY_PER_SECOND: '1', RATE_LIMIT_IP_PER_SECOND: '1', REDIS_URL: redisUrl },
    });
    let second: Service | undefined;

    beforeAll(async () => {
      // A second node: its own app, limiter and key cache, on the same database and Redis.
      second = await createService(current().service.config);
    });
    afterAll(async () => {
      await second?.close();
    });

    function nodes(): [Service, Service] {
      if (second === undefined) throw new Error('the second service exists only inside tests');
      return [current().service, second];
    }

    it('share one limit per secret key', async () => {
      const [nodeA, nodeB] = nodes();
      const { secretKey } = await nodeA.projects.createKey(current().projectId);
      const headers = { authorization: `Bearer ${secretKey}` };
      const statuses: number[] = [];
      const responses: LightMyRequestResponse[] = [];
      for (let i = 0; i < 6; i += 1) {
        const node = i % 2 === 0 ? nodeA : nodeB;
        const response = await node.app.inject({ method: 'GET', url: '/v1/project', headers });
        statuses.push(response.statusCode);
        responses.push(response);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(responses.slice(0, 5).map((response) => response.headers['ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
      expectRateLimited(responses[5]!);
    });

    it('share one limit per client IP', async () => {
      const [nodeA, nodeB] = nodes();
      const ip = uniqueIp();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const node = i % 2 === 0 ? nodeA : nodeB;
        statuses.push((await node.app.inject({ method: 'GET', url: '/v1/nope', remoteAddress: ip })).statusCode);
      }
      expect(statuses).toEqual([404, 404, 404, 429]);
    });
  });
});

import type { InjectOptions } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { randomBase62 } from '../../shared/ids.js';
import { useTestService } from '../../test/service.js';
import { signup } from './auth.testing.js';
import { MemoryLoginThrottle, RedisLoginThrottle } from './login-throttle.js';
import { testClock } from './auth.testing.js';

const redisUrl = inject('redisUrl');

describe('MemoryLoginThrottle', () => {
  it('refuses a key after failuresMax failures until the window ends; a success clears it', async () => {
    const clock = testClock();
    const throttle = new MemoryLoginThrottle({ clock, rule: { failuresMax: 3, windowSeconds: 60 } });
    for (let failure = 0; failure < 3; failure += 1) {
      expect(await throttle.retryAfterSeconds('k')).toBe(0);
      await throttle.recordFailure('k');
    }
    expect(await throttle.retryAfterSeconds('k')).toBe(60);
    expect(await throttle.retryAfterSeconds('other')).toBe(0);
    clock.advance(59_500);
    expect(await throttle.retryAfterSeconds('k')).toBe(1);
    clock.advance(500);
    expect(await throttle.retryAfterSeconds('k')).toBe(0);
    await throttle.recordFailure('k');
    await throttle.clear('k');
    expect(await throttle.retryAfterSeconds('k')).toBe(0);
  });
});

describe.skipIf(redisUrl === '')('RedisLoginThrottle', () => {
  const keyPrefix = `svc:test:login-failures:${randomBase62(8)}:`;
  const first = new RedisLoginThrottle({ url: redisUrl, keyPrefix, rule: { failuresMax: 3, windowSeconds: 2 } });
  const second = new RedisLoginThrottle({ url: redisUrl, keyPrefix, rule: { failuresMax: 3, windowSeconds: 2 } });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it('shares the count between processes and forgets it when the window ends', async () => {
    await first.recordFailure('pair');
    await second.recordFailure('pair');
    expect(await first.retryAfterSeconds('pair')).toBe(0);
    await first.recordFailure('pair');
    const retryAfter = await second.retryAfterSeconds('pair');
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(2);
    // Later failures do not extend the window.
    await second.recordFailure('pair');
    await sleep(2100);
    expect(await first.retryAfterSeconds('pair')).toBe(0);
  });

  it('a success clears the count', async () => {
    for (let failure = 0; failure < 3; failure += 1) await first.recordFailure('cleared');
    expect(await second.retryAfterSeconds('cleared')).toBeGreaterThan(0);
    await second.clear('cleared');
    expect(await first.retryAfterSeconds('cleared')).toBe(0);
  });

  it('lets attempts through when Redis does not answer, and reports it', async () => {
    const errors: unknown[] = [];
    const down = new RedisLoginThrottle({ url: 'redis://127.0.0.1:1', onError: (error) => errors.push(error) });
    await down.recordFailure('k');
    expect(await down.retryAfterSeconds('k')).toBe(0);
    expect(errors.length).toBeGreaterThan(0);
    await down.close();
  });
});

describe.skipIf(redisUrl === '')('log-in throttling through Redis (REDIS_URL)', () => {
  const ctx = useTestService('sqlite', { env: { REDIS_URL: redisUrl } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('answers 429 after 10 failures for the (email, IP) pair', async () => {
    const account = await signup(call, ctx().secretKey);
    const attempt = (password: string) =>
      call({
        method: 'POST',
        url: '/v1/auth/login',
        headers: ctx().auth,
        payload: { email: account.email, password },
        remoteAddress: '198.51.100.77',
      });
    for (let failure = 0; failure < 10; failure += 1) expect((await attempt('wrong-password')).statusCode).toBe(401);
    const refused = await attempt(account.password);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
  });
});

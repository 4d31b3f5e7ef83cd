import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBase62 } from './ids.js';
import { testClock, type TestClock } from '../modules/auth/auth.testing.js';
import {
  COMMAND_TIMEOUT_MS,
  type LoginThrottle,
  type LoginThrottleLimit,
  MemoryLoginThrottle,
  RedisLoginThrottle,
} from './login-throttle.js';

const redisUrl = inject('redisUrl');

/** A throttle backend under test and a way to move its time past a window. */
interface Backend {
  readonly name: string;
  readonly skip: boolean;
  /**
   * Two handles on one store, as two nodes would have (memory: the same object), and a way to be
   * past the window of the counter of `key`: moving the clock (memory) or, in Redis, whose clock
   * the test cannot move, waiting until Redis has expired the counter (its window).
   */
  open(): { first: LoginThrottle; second: LoginThrottle; passWindow: (key: string) => Promise<void>; close: () => Promise<void> };
}

const WINDOW_SECONDS = 1;

const backends: Backend[] = [
  {
    name: 'MemoryLoginThrottle',
    skip: false,
    open() {
      const clock: TestClock = testClock();
      const throttle = new MemoryLoginThrottle({ clock });
      return {
        first: throttle,
        second: throttle,
        passWindow: () => Promise.resolve(clock.advance(WINDOW_SECONDS * 1000)),
        close: () => Promise.resolve(),
      };
    },
  },
  {
    name: 'RedisLoginThrottle',
    skip: redisUrl === '',
    open() {
      const keyPrefix = `svc:test:login-failures:${randomBase62(8)}:`;
      const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      return {
        first: new RedisLoginThrottle({ url: redisUrl, keyPrefix }),
        second: new RedisLoginThrottle({ url: redisUrl, keyPrefix }),
        passWindow: async (key) => {
          // The bound only stops a broken expiry from hanging the test; the window is 1 s.
          await expect.poll(() => admin.exists(`${keyPrefix}${key}`), { timeout: 10_000, interval: 20 }).toBe(0);
        },
        close: async () => {
          await admin.quit();
        },
      };
    },
  },
];

function limit(key: string, failuresMax: number): LoginThrottleLimit {
  return { key, failuresMax, windowSeconds: WINDOW_SECONDS };
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(backend.name, () => {
    let first: LoginThrottle;
    let second: LoginThrottle;
    let passWindow: (key: string) => Promise<void>;
    let close: () => Promise<void>;
    beforeAll(() => {
      ({ first, second, passWindow, close } = backend.open());
    });
    afterAll(async () => {
      await first.close();
      if (second !== first) await second.close();
      await close();
    });

    it('reserves up to failuresMax slots of a key in a window, shared between nodes, then refuses until it ends', async () => {
      const pair = limit(`pair-${randomBase62(6)}`, 3);
      expect(await first.reserve([pair])).toBe(0);
      expect(await second.reserve([pair])).toBe(0);
      expect(await first.reserve([pair])).toBe(0);
      const retryAfter = await second.reserve([pair]);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
      // A refused attempt is not counted: the window is not extended and ends on time.
      const refusedAgain = await first.reserve([pair]);
      expect(refusedAgain).toBeGreaterThan(0);
      expect(refusedAgain).toBeLessThanOrEqual(WINDOW_SECONDS);
      await passWindow(pair.key);
      expect(await first.reserve([pair])).toBe(0);
    });

    it('takes a slot of every limit or of none: a full limit refuses without counting against the others', async () => {
      const pairA = limit(`a-${randomBase62(6)}`, 2);
      const pairB = limit(`b-${randomBase62(6)}`, 2);
      const email = limit(`email-${randomBase62(6)}`, 3);
      expect(await first.reserve([pairA, email])).toBe(0);
      expect(await first.reserve([pairA, email])).toBe(0);
      expect(await first.reserve([pairA, email])).toBeGreaterThan(0); // pair A full: email not counted
      expect(await second.reserve([pairB, email])).toBe(0); // email's third slot
      expect(await second.reserve([pairB, email])).toBeGreaterThan(0); // email full: pair B not counted
      await second.release([email.key]);
      expect(await second.reserve([pairB, email])).toBe(0); // pair B had one slot left
      expect(await second.reserve([pairB, email])).toBeGreaterThan(0);
    });

    it('release gives back one slot; clear forgets the key', async () => {
      const pair = limit(`r-${randomBase62(6)}`, 2);
      expect(await first.reserve([pair])).toBe(0);
      expect(await first.reserve([pair])).toBe(0);
      await second.release([pair.key]);
      expect(await first.reserve([pair])).toBe(0);
      expect(await first.reserve([pair])).toBeGreaterThan(0);
      await second.clear(pair.key);
      expect(await first.reserve([pair])).toBe(0);
      // Releasing more than was reserved never goes below nothing.
      await first.release([pair.key, pair.key, pair.key]);
      expect(await first.reserve([pair])).toBe(0);
      expect(await first.reserve([pair])).toBe(0);
      expect(await first.reserve([pair])).toBeGreaterThan(0);
    });

    // Regression: the check ran before the password and the count after it, so
    // concurrent guesses all saw room. Reserving is one atomic step.
    it('lets exactly failuresMax of 30 concurrent reservations through, across two nodes', async () => {
      const pair = limit(`c-${randomBase62(6)}`, 10);
      const email = limit(`ce-${randomBase62(6)}`, 100);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? first : second).reserve([pair, email])),
      );
      expect(answers.filter((retryAfter) => retryAfter === 0)).toHaveLength(10);
      expect(answers.filter((retryAfter) => retryAfter > 0)).toHaveLength(20);
      // The email's limit counted the ten reservations only.
      const emailOnly = await Promise.all(Array.from({ length: 95 }, () => first.reserve([email])));
      expect(emailOnly.filter((retryAfter) => retryAfter === 0)).toHaveLength(90);
    });
  });
}

// Regression: an attempt that Redis did not answer was let through, so an outage of Redis lifted
// the throttle. It rejects now, and FallbackLoginThrottle counts in memory (lib/store-fallback.test.ts).
describe('RedisLoginThrottle when Redis does not answer', () => {
  it('rejects every step within the command timeout', async () => {
    // A port nothing listens on.
    const down = new RedisLoginThrottle({ url: 'redis://127.0.0.1:1' });
    try {
      const pair = limit('k', 1);
      // A log-in waits for its throttle step, so each step must give up within the command timeout,
      // not after ioredis' reconnection backoff. Each is timed from its own call; the bound is the
      // command timeout with room for a loaded machine.
      for (const step of [() => down.reserve([pair]), () => down.release([pair.key]), () => down.clear(pair.key)]) {
        const started = performance.now();
        await expect(step()).rejects.toBeInstanceOf(Error);
        expect(performance.now() - started).toBeLessThan(4 * COMMAND_TIMEOUT_MS);
      }
    } finally {
      await down.close();
    }
  });
});

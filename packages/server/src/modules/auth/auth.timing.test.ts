import type { InjectOptions } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { signup, uniqueEmail } from './auth.testing.js';

const ROUNDS = 31;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describeEachDialect('log-in timing', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('takes about as long for an unknown email as for a wrong password (within 30 %)', async () => {
    const account = await signup(call, ctx().secretKey);
    let address = 0;
    const timed = async (email: string): Promise<number> => {
      address += 1;
      const started = process.hrtime.bigint();
      // A new client IP per attempt keeps the (email, IP) throttle out of the measurement.
      const response = await call({
        method: 'POST',
        url: '/v1/auth/login',
        headers: ctx().auth,
        payload: { email, password: 'not-the-password' },
        remoteAddress: `10.9.${Math.floor(address / 250)}.${address % 250}`,
      });
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      expect(response.statusCode).toBe(401);
      return elapsedMs;
    };
    // Warm up both paths (the first argon2id call allocates its memory).
    await timed(account.email);
    await timed(uniqueEmail('warm-up'));
    // Pairs taken back to back, in alternating order, and compared pair by pair: the machine's load
    // drifts (other processes, the garbage collector) but is about the same within one pair.
    const ratios: number[] = [];
    const wrongPassword: number[] = [];
    const unknownEmail: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const [known, unknown] =
        round % 2 === 0
          ? [await timed(account.email), await timed(uniqueEmail('nobody'))]
          : await timed(uniqueEmail('nobody')).then(async (first) => [await timed(account.email), first] as const);
      wrongPassword.push(known);
      unknownEmail.push(unknown);
      ratios.push(known / unknown);
    }
    const ratio = median(ratios);
    const summary = `median wrong password ${median(wrongPassword).toFixed(1)} ms, unknown email ${median(unknownEmail).toFixed(1)} ms, median ratio ${ratio.toFixed(2)}`;
    expect(ratio, summary).toBeGreaterThan(1 / 1.3);
    expect(ratio, summary).toBeLessThan(1.3);
  });
});

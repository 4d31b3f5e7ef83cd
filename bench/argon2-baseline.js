// The bare argon2id verify rate on this machine, for the `sessions` scenario's log-in baseline:
// `@node-rs/argon2` verify of one stored hash with the service's parameters, CONCURRENCY calls in
// flight (as many as the service's HTTP connections would keep busy), for DURATION_SECONDS after
// WARMUP_SECONDS. Prints one JSON line: { verifies_per_s, total, seconds, cpu_us_per_verify }.
// Bounded: it stops after DURATION_SECONDS whatever happens.
import { performance } from 'node:perf_hooks';
import { hash, verify } from '@node-rs/argon2';
import { PASSWORD_HASH_OPTIONS } from '../packages/server/dist/modules/auth/passwords.js';

const durationSeconds = Number(process.env.DURATION_SECONDS ?? '5');
const warmupSeconds = Number(process.env.WARMUP_SECONDS ?? '1');
const concurrency = Number(process.env.CONCURRENCY ?? '8');
const password = 'correct horse battery staple, bench';

// The service's own parameters, so the baseline cannot drift from what log in verifies.
const stored = await hash(password, PASSWORD_HASH_OPTIONS);

async function run(seconds) {
  const until = performance.now() + seconds * 1000;
  let total = 0;
  async function worker() {
    while (performance.now() < until) {
      if (!(await verify(stored, password))) throw new Error('argon2 verify refused its own hash');
      total += 1;
    }
  }
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = process.cpuUsage(cpuBefore);
  return { total, seconds: (performance.now() - started) / 1000, cpuUs: cpu.user + cpu.system };
}

if (warmupSeconds > 0) await run(warmupSeconds);
const { total, seconds, cpuUs } = await run(durationSeconds);
console.log(
  JSON.stringify({
    verifies_per_s: Math.round(total / seconds),
    total,
    seconds: Number(seconds.toFixed(2)),
    cpu_us_per_verify: total === 0 ? null : Math.round(cpuUs / total),
  }),
);

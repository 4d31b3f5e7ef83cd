// The webhook delivery throughput target (deliveries/s >= 0.4 x bare POSTs to the same receiver) against
// its floor. A delivery is at least a bare POST plus the rows that make it durable, so its rate on
// this machine is bounded by the slower of the two. This scenario measures, in one run:
//   - bare POSTs of an envelope-sized body to the receiver (the webhooks scenario's baseline);
//   - the delivery's row work in PostgreSQL alone, with nothing around it: pgbench with a custom
//     script doing, per batch of BATCH events, exactly the worker's writes (mark the events
//     dispatched and insert their leased deliveries in one transaction; mark the deliveries
//     succeeded and insert their attempt rows in a second), on the service's own schema (its
//     migrations, indexes, foreign keys and checks), 2 clients as the worker's two loops.
// The floor's share of bare POSTs is the most any worker could reach here: if it is below the
// target, no change to the worker meets the target on this machine.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { cpuSince, startCpuWindow } from '../lib/cpu.js';
import { postgresCpuProbe } from '../lib/pg-cpu.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, prepareDatabase } from '../lib/service.js';
import { measureBaseline, startReceiver } from './webhooks.js';

const TARGET_SHARE = 0.4;
const BATCH = 100;
const CLIENTS = 2;

export const scenario = {
  name: 'webhooks-floor',
  description: "Webhook deliveries' 0.4 x bare POSTs against its floor: bare POSTs, and a delivery's rows in PostgreSQL alone (pgbench)",

  async run(ctx) {
    const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
    if (unreachable !== undefined) {
      ctx.note(`webhooks-floor: skipped, PostgreSQL not reachable (${unreachable})`);
      return;
    }
    const receiver = await startReceiver(ctx);
    let bare;
    try {
      bare = await measureBaseline(ctx, receiver);
      ctx.record({ bench: 'webhooks_floor_bare_posts', dialect: null, log_level: null, ...bare });
    } finally {
      await receiver.stop();
    }
    const rows = await measureRows(ctx);
    const share = rows.req_per_s / bare.req_per_s;
    ctx.record({
      bench: 'webhooks_floor_rows',
      dialect: 'postgres',
      log_level: null,
      ...rows,
      bare_posts_per_s: bare.req_per_s,
      share_of_bare_posts: Number(share.toFixed(3)),
      target_share: TARGET_SHARE,
      verdict: share >= TARGET_SHARE ? 'PASS (the floor allows the target)' : 'FAIL (the floor alone is below the target)',
    });
  },
};

async function measureRows(ctx) {
  const database = await prepareDatabase(ctx, 'postgres');
  try {
    const { projectId } = createProject(ctx, database, 'webhooks-floor');
    const url = database.env['DATABASE_URL'];
    const seconds = ctx.options.durationSeconds;
    // Enough undispatched events for the run at up to 100,000 deliveries/s.
    const events = Math.min(5_000_000, 100_000 * (seconds + 2));
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const now = new Date().toISOString();
      await pool.query(
        `insert into webhook_endpoints (id, project_id, url, events, enabled, secret, created_at, updated_at)
         values ('we_floor', $1, 'http://127.0.0.1:9/', '["*"]', 1, 'x', $2, $2)`,
        [projectId, now],
      );
      await pool.query(
        `insert into events (id, project_id, type, data, idempotency_key, created_at)
         select 'evt_f' || n, $1, 'wallet.credit.added', $3, 'kf' || n, $2 from generate_series(0, $4 - 1) n`,
        [projectId, now, '{"wallet_id":"wlt_0000000000000000bench0","amount":1500,"balance":98500}', events],
      );
      await pool.query('create sequence floor_batches');
      await pool.query('vacuum analyze');
    } finally {
      await pool.end();
    }
    const script = join(database.dataDir, 'delivery-rows.sql');
    writeFileSync(script, deliveryScript(projectId));
    const window = startCpuWindow(undefined);
    const stopProbe = postgresCpuProbe(new URL(url).pathname.slice(1)).start();
    const output = await pgbench(
      ['-n', '-c', String(CLIENTS), '-j', String(CLIENTS), '-T', String(seconds), '-f', script, url],
      (seconds + 60) * 1000,
    );
    const cpu = cpuSince(window);
    const postgresSeconds = stopProbe();
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
    const failed = /number of failed transactions: (\d+)/.exec(output);
    if (tps === null) throw new Error(`pgbench printed no tps:\n${output}`);
    const deliveries = Math.round(Number(tps[1]) * BATCH * seconds);
    return {
      req_per_s: Math.round(Number(tps[1]) * BATCH),
      postgres_cpu_us_per_req: postgresSeconds === null ? null : Math.round((postgresSeconds * 1e6) / deliveries),
      p50_ms: null,
      p99_ms: null,
      batch: BATCH,
      clients: CLIENTS,
      cpu,
      valid: failed === null || Number(failed[1]) === 0,
    };
  } finally {
    await database.drop();
  }
}

/** One pgbench "transaction": a batch of BATCH deliveries fanned out, then recorded, as the worker does. */
function deliveryScript(projectId) {
  const p = `'${projectId}'`;
  const range = `generate_series(:b * ${BATCH}, :b * ${BATCH} + ${BATCH - 1}) n`;
  const now = `'2026-11-25T00:00:00.000Z'`;
  return `select nextval('floor_batches') as b \\gset
begin;
update events set dispatched_at = ${now} where id in (select 'evt_f' || n from ${range});
insert into webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempt_count, scheduled_attempt_count,
  next_attempt_at, lease_id, leased_until, last_attempt_at, created_at, updated_at)
  select 'del_f' || n, ${p}, 'we_floor', 'evt_f' || n, 'wallet.credit.added', 'pending', 0, 0, ${now}, 'w.lease', ${now}, null, ${now}, ${now}
  from ${range};
commit;
begin;
update webhook_deliveries set status = 'succeeded', attempt_count = attempt_count + 1, scheduled_attempt_count = scheduled_attempt_count + 1,
  next_attempt_at = null, lease_id = null, leased_until = null, last_attempt_at = ${now}, updated_at = ${now}
  where id in (select 'del_f' || n from ${range});
insert into webhook_attempts (delivery_id, attempt_number, project_id, kind, created_at, status_code, latency_ms, error, response_body)
  select 'del_f' || n, 1, ${p}, 'scheduled', ${now}, 200, 5, null, null from ${range};
commit;
`;
}

function pgbench(args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const output = Buffer.concat(chunks).toString('utf8');
      if (code === 0) resolve(output);
      else reject(new Error(`pgbench exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
}

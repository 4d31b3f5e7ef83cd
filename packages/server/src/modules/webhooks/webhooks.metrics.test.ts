import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { recordEvent } from '../events/events.service.js';
import { createDeliveryMetrics, DELIVERY_GAUGES_REFRESH_INTERVAL_MS } from './webhooks.metrics.js';
import type { WebhookDelivery, WebhookEndpointWithSecret } from './webhooks.service.js';

/** A clock the test moves by hand, so the retry gap needs no sleeping. */
function manualClock(): Clock & { advance(milliseconds: number): void } {
  let now = Date.parse('2026-11-20T12:00:00.000Z');
  return { now: () => new Date(now), advance: (milliseconds) => void (now += milliseconds) };
}

/** One sample of the Prometheus text: `name{labels} value`. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]));
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

describeEachDialect('webhook delivery metrics on GET /metrics', (dialect) => {
  const clock = manualClock();
  const ctx = useTestService(dialect, {
    env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,1' },
    serviceOptions: { clock, webhooks: { timeoutMs: 1000 } },
  });
  let server: ReturnType<typeof createServer>;
  let origin = '';
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(request.url === '/ok' ? 200 : 500).end());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  /** What the periodic job does every 15 s: counts the database-wide gauges again. */
  async function refreshGauges(): Promise<void> {
    const job = ctx().service.jobs.find((candidate) => candidate.name === 'webhook-metrics-gauges');
    expect(job?.intervalMs).toBe(DELIVERY_GAUGES_REFRESH_INTERVAL_MS);
    await job?.run();
  }

  async function scrape(options: { refreshed?: boolean } = {}) {
    if (options.refreshed ?? true) await refreshGauges();
    // No METRICS_TOKEN in this service: the scrape needs no credential.
    const response = await ctx().service.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const samples = parseMetrics(response.body);
    return (name: string, labels: Record<string, string> = {}): number | undefined =>
      samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value;
  }

  it('counts attempts by kind and result, finished deliveries by status, attempt time and lag, and shows the work waiting', async () => {
    const { auth, projectId } = ctx();
    let metric = await scrape();
    // Every series exists from the start, at zero.
    for (const result of ['succeeded', 'http_error', 'redirect', 'timeout', 'network', 'refused']) {
      expect(metric('webhook_attempts_total', { kind: 'scheduled', result })).toBe(0);
      expect(metric('webhook_attempts_total', { kind: 'manual', result })).toBe(0);
    }
    expect(metric('webhook_deliveries_finished_total', { status: 'failed' })).toBe(0);

    const endpoint = async (path: string) => {
      const response = await ctx().service.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: auth,
        payload: { url: `${origin}${path}`, events: ['*'] },
      });
      return response.json<WebhookEndpointWithSecret>();
    };
    await endpoint('/ok');
    const failing = await endpoint('/fail');
    await inTransaction(ctx().service.db, (trx) =>
      recordEvent(trx, {
        projectId,
        type: 'user.created',
        data: { user_id: 'usr_1', email: 'one@example.com' },
        createdAt: isoTime(clock.now()),
      }),
    );
    metric = await scrape();
    expect(metric('webhook_events_undispatched')).toBe(1);
    expect(metric('webhook_deliveries_pending')).toBe(0);

    const worker = ctx().service.webhooks.worker;
    await worker.drain();
    // Until the job counts again, a scrape shows the figures held in memory.
    metric = await scrape({ refreshed: false });
    expect(metric('webhook_events_undispatched')).toBe(1);
    metric = await scrape();
    expect(metric('webhook_events_undispatched')).toBe(0);
    expect(metric('webhook_attempts_total', { kind: 'scheduled', result: 'succeeded' })).toBe(1);
    expect(metric('webhook_attempts_total', { kind: 'scheduled', result: 'http_error' })).toBe(1);
    expect(metric('webhook_deliveries_finished_total', { status: 'succeeded' })).toBe(1);
    expect(metric('webhook_deliveries_pending')).toBe(1); // the failing one, due again in 1 s
    expect(metric('webhook_attempt_duration_seconds_count')).toBe(2);
    expect(metric('webhook_attempt_duration_seconds_bucket', { le: '10' })).toBe(2);
    expect(metric('webhook_delivery_lag_seconds_count')).toBe(1);
    // The HTTP metrics are in the same registry.
    expect(metric('http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1);

    // The second and last scheduled attempt fails too: the delivery is failed.
    clock.advance(1000);
    await worker.drain();
    metric = await scrape();
    expect(metric('webhook_attempts_total', { kind: 'scheduled', result: 'http_error' })).toBe(2);
    expect(metric('webhook_deliveries_finished_total', { status: 'failed' })).toBe(1);
    expect(metric('webhook_deliveries_pending')).toBe(0);

    // A retry by hand is counted as manual.
    const [delivery] = (
      await ctx().service.app.inject({ method: 'GET', url: `/v1/webhooks/${failing.id}/deliveries`, headers: auth })
    ).json<{ data: WebhookDelivery[] }>().data;
    await ctx().service.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${failing.id}/deliveries/${delivery?.id ?? ''}/retry`,
      headers: auth,
    });
    metric = await scrape();
    expect(metric('webhook_attempts_total', { kind: 'manual', result: 'http_error' })).toBe(1);
    expect(metric('webhook_deliveries_finished_total', { status: 'failed' })).toBe(1);
  });
});

// Regression: every scrape of the public /metrics ran count(*) over every tenant's deliveries and
// events. A scrape now reads memory only; the counts run in a job, at most every 15 s.
describeEachDialect('GET /metrics does not query the database', (dialect) => {
  const ctx = useTestService(dialect);

  it('answers scrapes without a single query, however many', async () => {
    const executor = ctx().service.db.kysely.getExecutor();
    const spy = vi.spyOn(executor, 'executeQuery');
    try {
      // The spy sees the service's queries: a request that reads the database shows up in it.
      expect((await ctx().service.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      expect(spy).toHaveBeenCalled();
      spy.mockClear();
      for (let scrape = 0; scrape < 5; scrape += 1) {
        const response = await ctx().service.app.inject({ method: 'GET', url: '/metrics' });
        expect(response.statusCode).toBe(200);
        expect(response.body).toContain('webhook_deliveries_pending ');
      }
      const texts = spy.mock.calls.map(([query]) => query.sql);
      expect(texts).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('delivery gauges', () => {
  it('are counted by the job alone, never by a scrape; a failed count keeps the last value', async () => {
    const registry = new Registry();
    const counts = { pending: 0, undispatched: 0 };
    let pending = 7;
    const { gaugesJob } = createDeliveryMetrics(registry, {
      countPending: () => {
        counts.pending += 1;
        return pending < 0 ? Promise.reject(new Error('database gone')) : Promise.resolve(pending);
      },
      countUndispatched: () => {
        counts.undispatched += 1;
        return Promise.resolve(3);
      },
    });
    for (let scrape = 0; scrape < 3; scrape += 1) await registry.metrics();
    expect(counts).toEqual({ pending: 0, undispatched: 0 });
    await gaugesJob.run();
    const text = await registry.metrics();
    expect(text).toContain('webhook_deliveries_pending 7');
    expect(text).toContain('webhook_events_undispatched 3');
    expect(counts).toEqual({ pending: 1, undispatched: 1 });
    pending = -1;
    await expect(gaugesJob.run()).rejects.toThrow('database gone');
    expect(await registry.metrics()).toContain('webhook_deliveries_pending 7');
    expect(await registry.metrics()).toContain('webhook_events_undispatched 3');
  });
});

describeEachDialect('GET /metrics with METRICS_TOKEN', (dialect) => {
  const token = 'metrics-token-0123456789abcdef';
  const ctx = useTestService(dialect, { env: { METRICS_TOKEN: token } });
  const scrape = (headers: Record<string, string> = {}) => ctx().service.app.inject({ method: 'GET', url: '/metrics', headers });
  const errorOf = (response: Awaited<ReturnType<typeof scrape>>) => ({
    status: response.statusCode,
    code: response.json<{ error: { code: string } }>().error.code,
  });

  it('answers only Authorization: Bearer <METRICS_TOKEN>', async () => {
    const ok = await scrape({ authorization: `Bearer ${token}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('http_requests_total');
    expect(errorOf(await scrape())).toEqual({ status: 401, code: 'credential_missing' });
    expect(errorOf(await scrape({ authorization: `Bearer ${token}x` }))).toEqual({ status: 401, code: 'metrics_token_invalid' });
    expect(errorOf(await scrape({ authorization: `Bearer ${token.slice(1)}` }))).toEqual({ status: 401, code: 'metrics_token_invalid' });
    expect(errorOf(await scrape({ authorization: token }))).toEqual({ status: 401, code: 'metrics_token_invalid' });
    expect(errorOf(await scrape({ authorization: `Bearer ${ctx().secretKey}` }))).toEqual({ status: 401, code: 'metrics_token_invalid' });
    const refused = await scrape({ authorization: 'Bearer wrong' });
    expect(refused.body).not.toContain('http_requests_total');
    expect(refused.body).not.toContain(token);
    // The other operations routes stay open.
    expect((await ctx().service.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

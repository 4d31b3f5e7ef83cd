import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { type OtlpReceiver, SPAN_KIND_CLIENT, startOtlpReceiver } from '../test/otlp-receiver.js';
import { outboundFetch } from './outbound-http.fetch.js';
import { OutboundHttp } from './outbound-http.js';
import { activeTracer, startTracing, traced, type TracingHandle } from './tracing.js';

/**
 * The tracing facade (docs/operations.md "Traces"): off, it installs nothing; on, the OAuth and SSO
 * provider calls made through `outboundFetch` are client spans under the current span, naming the
 * provider's host and never its path, query, headers or bodies.
 */

describe('tracing facade', () => {
  let otlp: OtlpReceiver;
  let tracing: TracingHandle;
  let provider: ReturnType<typeof createServer>;
  let providerUrl = '';

  beforeAll(async () => {
    expect(activeTracer()).toBeUndefined();
    otlp = await startOtlpReceiver();
    provider = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    provider.listen(0, '127.0.0.1');
    await once(provider, 'listening');
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    if (config.tracing === undefined) throw new Error('tracing should be configured');
    tracing = await startTracing(config.tracing, pino({ level: 'silent' }));
  });

  afterAll(async () => {
    await tracing.stop();
    provider.close();
    await otlp.close();
  });

  it('records a provider call as a client span of the current span, by host only', async () => {
    const fetch = outboundFetch(new OutboundHttp({ allowPrivate: true }));
    const code = 'authorization-code-4f9a1c';
    const clientSecret = 'client-secret-77b0e2';
    await traced(
      'parent',
      'internal',
      () => ({}),
      async () => {
        const response = await fetch(`${providerUrl}/token?code=${code}`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(`client:${clientSecret}`).toString('base64')}` },
          body: new URLSearchParams({ code, client_secret: clientSecret }),
        });
        expect(response.status).toBe(200);
      },
    );
    const spans = await otlp.waitFor((received) => received.some((span) => span.name === 'parent'));
    const parent = spans.find((span) => span.name === 'parent');
    expect(spans.find((span) => span.name === 'outbound.request')).toMatchObject({
      kind: SPAN_KIND_CLIENT,
      traceId: parent?.traceId,
      parentSpanId: parent?.spanId,
      attributes: {
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(providerUrl).port),
        'http.response.status_code': 200,
      },
    });
    const exported = otlp.requests.map((request) => request.body.toString('utf8')).join('\n');
    for (const value of [code, clientSecret, '/token']) expect(exported).not.toContain(value);
  });
});

import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../db/database.js';
import { createService, type Service } from '../main.js';
import { signup, type SignedUp } from '../modules/auth/auth.testing.js';
import { createTestDatabase, describeEachDialect, testConfig, useTestDatabase } from '../test/database.js';
import { freePort } from '../test/serve-process.js';
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND_CLIENT, SPAN_KIND_SERVER, startOtlpReceiver } from '../test/otlp-receiver.js';
import { type Receiver, startReceiver } from '../test/webhook-receiver.js';

/**
 * Traces (CONTRACT 9.5, docs/operations.md "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, every
 * request is one server span with its route template, status and project; database transactions
 * and webhook attempts are its children; an incoming `traceparent` is continued; and no credential
 * or body value reaches any exported span. Exports go to a real OTLP/HTTP receiver on loopback.
 */

const CREDIT_ROUTE = '/v1/wallets/:id/credits';
const RETRY_ROUTE = '/v1/webhooks/:id/deliveries/:delivery_id/retry';

interface Traced {
  readonly service: Service;
  readonly otlp: OtlpReceiver;
  readonly hooks: Receiver;
  readonly projectId: string;
  readonly secretKey: string;
}

function useTracedService(dialect: Dialect, env: Readonly<Record<string, string>>): () => Traced {
  const database = useTestDatabase(dialect);
  let current: Traced | undefined;
  beforeAll(async () => {
    const otlp = await startOtlpReceiver();
    const hooks = await startReceiver();
    const config = testConfig(database().url, {
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
      WEBHOOK_ALLOW_PRIVATE: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      ...env,
    });
    const service = await createService(config);
    const { project, secretKey } = await service.projects.createProject({ name: 'Traced project' });
    current = { service, otlp, hooks, projectId: project.id, secretKey };
  });
  afterAll(async () => {
    await current?.service.close();
    await current?.otlp.close();
    await current?.hooks.close();
  });
  return () => {
    if (current === undefined) throw new Error('the traced service exists only inside tests');
    return current;
  };
}

function serverSpans(spans: readonly ReceivedSpan[], route: string): ReceivedSpan[] {
  return spans.filter((span) => span.kind === SPAN_KIND_SERVER && span.attributes['http.route'] === route);
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

describeEachDialect('traces over OTLP/HTTP JSON', (dialect) => {
  const traced = useTracedService(dialect, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'svc-traced-test' });
  const incomingTraceId = hex(16);
  const incomingParentId = hex(8);
  const descriptionMarker = `body-marker-${hex(8)}`;
  let user: SignedUp;
  let webhookSecret = '';
  let spans: ReceivedSpan[] = [];

  beforeAll(async () => {
    const { service, secretKey, hooks } = traced();
    const call = (options: InjectOptions) => service.app.inject(options);
    const auth = { authorization: `Bearer ${secretKey}` };
    user = await signup(call, secretKey);
    const wallet = await call({ method: 'POST', url: '/v1/wallets', headers: auth, payload: { user_id: user.userId, currency: 'USD' } });
    expect(wallet.statusCode).toBe(201);
    const credit = await call({
      method: 'POST',
      url: `/v1/wallets/${wallet.json<{ id: string }>().id}/credits?description=${descriptionMarker}-query`,
      headers: { ...auth, 'idempotency-key': `credit-${hex(8)}`, traceparent: `00-${incomingTraceId}-${incomingParentId}-01` },
      payload: { amount: 4321, description: descriptionMarker },
    });
    // The query parameter is refused: a request with a body value in its URL still gets one span.
    expect([201, 400]).toContain(credit.statusCode);
    const creditAgain = await call({
      method: 'POST',
      url: `/v1/wallets/${wallet.json<{ id: string }>().id}/credits`,
      headers: { ...auth, 'idempotency-key': `credit-${hex(8)}`, traceparent: `00-${incomingTraceId}-${incomingParentId}-01` },
      payload: { amount: 4321, description: descriptionMarker },
    });
    expect(creditAgain.statusCode).toBe(201);
    const endpoint = await call({
      method: 'POST',
      url: '/v1/webhooks',
      headers: auth,
      payload: { url: hooks.url('/hook'), events: ['*'] },
    });
    expect(endpoint.statusCode).toBe(201);
    const { id: endpointId, secret } = endpoint.json<{ id: string; secret: string }>();
    webhookSecret = secret;
    const test = await call({ method: 'POST', url: `/v1/webhooks/${endpointId}/test`, headers: auth });
    const deliveryId = test.json<{ id: string }>().id;
    const retry = await call({ method: 'POST', url: `/v1/webhooks/${endpointId}/deliveries/${deliveryId}/retry`, headers: auth });
    expect(retry.statusCode).toBe(200);
    expect(hooks.at('/hook')).toHaveLength(1);
    const validate = await call({ method: 'POST', url: '/v1/sessions/validate', headers: auth, payload: { session_id: user.token } });
    expect(validate.statusCode).toBe(200);
    const unknown = await call({
      method: 'GET',
      url: `/v1/no-such-route?token=${user.token}`,
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(unknown.statusCode).toBe(404);

    spans = await traced().otlp.waitFor(
      (received) =>
        serverSpans(received, CREDIT_ROUTE).length >= 2 &&
        serverSpans(received, RETRY_ROUTE).length >= 1 &&
        serverSpans(received, '/v1/sessions/validate').length >= 1 &&
        received.some((span) => span.kind === SPAN_KIND_SERVER && span.attributes['http.route'] === undefined) &&
        received.some((span) => span.name === 'webhook.attempt'),
    );
  });

  it('exports one server span per request, named by method and route template, with status and project', () => {
    const credits = serverSpans(spans, CREDIT_ROUTE);
    expect(credits).toHaveLength(2);
    const creditSpan = credits.find((span) => span.attributes['http.response.status_code'] === 201);
    expect(creditSpan).toMatchObject({
      name: `POST ${CREDIT_ROUTE}`,
      serviceName: 'svc-traced-test',
      attributes: { 'http.request.method': 'POST', 'http.route': CREDIT_ROUTE, 'svc.project_id': traced().projectId },
    });
    expect(serverSpans(spans, '/v1/auth/signup')).toHaveLength(1);
    expect(serverSpans(spans, '/v1/wallets')).toHaveLength(1);
    expect(serverSpans(spans, '/v1/webhooks')).toHaveLength(1);
    expect(serverSpans(spans, RETRY_ROUTE)).toHaveLength(1);
    expect(serverSpans(spans, RETRY_ROUTE)[0]?.attributes['http.response.status_code']).toBe(200);
    // No route matched: the span is named by the method alone and says 404.
    const unmatched = spans.filter((span) => span.kind === SPAN_KIND_SERVER && span.attributes['http.route'] === undefined);
    expect(unmatched).toHaveLength(1);
    expect(unmatched[0]).toMatchObject({ name: 'GET', attributes: { 'http.response.status_code': 404 } });
  });

  it("continues the caller's traceparent: same trace id, the caller's span as parent", () => {
    for (const span of serverSpans(spans, CREDIT_ROUTE)) {
      expect(span.traceId).toBe(incomingTraceId);
      expect(span.parentSpanId).toBe(incomingParentId);
    }
    // Without a traceparent, a request starts a trace of its own.
    const signupSpan = serverSpans(spans, '/v1/auth/signup')[0];
    expect(signupSpan?.traceId).not.toBe(incomingTraceId);
    expect(signupSpan?.parentSpanId).toBe('');
  });

  it("records the database transaction as a child of the request's span", () => {
    const creditSpan = serverSpans(spans, CREDIT_ROUTE).find((span) => span.attributes['http.response.status_code'] === 201);
    const transactions = spans.filter((span) => span.name === 'db.transaction' && span.parentSpanId === creditSpan?.spanId);
    expect(transactions.length).toBeGreaterThanOrEqual(1);
    expect(transactions[0]).toMatchObject({
      kind: SPAN_KIND_CLIENT,
      traceId: incomingTraceId,
      attributes: { 'db.system.name': dialect === 'postgres' ? 'postgresql' : 'sqlite' },
    });
  });

  it("records the webhook attempt as a child of the retry request's span", () => {
    const retrySpan = serverSpans(spans, RETRY_ROUTE)[0];
    const attempt = spans.find((span) => span.name === 'webhook.attempt');
    expect(attempt).toMatchObject({
      kind: SPAN_KIND_CLIENT,
      traceId: retrySpan?.traceId,
      parentSpanId: retrySpan?.spanId,
      attributes: {
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
        'svc.project_id': traced().projectId,
        'svc.webhook.attempt_kind': 'manual',
      },
    });
  });

  it('puts no credential, header or body value in any exported span', () => {
    const exported = traced()
      .otlp.requests.map((request) => request.body.toString('utf8'))
      .join('\n');
    const secrets = {
      secretKey: traced().secretKey,
      sessionToken: user.token,
      refreshToken: user.refreshToken,
      password: user.password,
      email: user.email,
      webhookSecret,
      bodyValue: descriptionMarker,
    };
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length, name).toBeGreaterThan(8);
      expect(exported.includes(value), `${name} in an exported span`).toBe(false);
    }
    expect(exported).not.toContain('authorization');
  });
});

describe('traces over OTLP/HTTP protobuf', () => {
  // The default protocol; the receiver keeps the bytes, so the check is on what arrives.
  const traced = useTracedService('sqlite', {});

  it('posts protobuf to /v1/traces', async () => {
    const { service, secretKey, otlp } = traced();
    const response = await service.app.inject({ method: 'GET', url: '/v1/wallets', headers: { authorization: `Bearer ${secretKey}` } });
    expect(response.statusCode).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!otlp.requests.some((request) => request.body.includes('/v1/wallets')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const exported = otlp.requests.find((request) => request.body.includes('/v1/wallets'));
    expect(exported?.contentType).toBe('application/x-protobuf');
    expect(exported?.body.length).toBeGreaterThan(0);
    // Protobuf strings are their UTF-8 bytes: the default service name and the route are in it.
    expect(exported?.body.includes('svc')).toBe(true);
    expect(otlp.spans()).toEqual([]);
  });
});

describe('traces to a collector that is down', () => {
  it('answers requests as usual and closes without an error', async () => {
    const database = await createTestDatabase('sqlite');
    const unused = await freePort();
    const service = await createService(
      testConfig(database.url, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${unused}`, OTEL_BSP_SCHEDULE_DELAY: '1' }),
    );
    try {
      const { secretKey } = await service.projects.createProject({ name: 'Collector down' });
      for (let request = 0; request < 3; request += 1) {
        const response = await service.app.inject({ method: 'GET', url: '/v1/wallets', headers: { authorization: `Bearer ${secretKey}` } });
        expect(response.statusCode).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await expect(service.close()).resolves.toBeUndefined();
      await database.drop();
    }
  });
});

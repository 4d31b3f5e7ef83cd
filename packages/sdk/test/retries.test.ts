import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ResponseInfo, SvcClient, SvcConnectionError, ServiceError, SvcTimeoutError } from '../src/index.js';
import { retryAfterSeconds } from '../src/transport.js';
import { json, PASSWORD, type Received, startStub, uniqueEmail, useSdkService } from './harness.js';

/**
 * A loopback proxy to the real server that, for requests `drop` picks, forwards the request,
 * waits for the server's whole answer, and then cuts the connection instead of passing it on:
 * the operation ran, but the client never hears of it.
 */
async function startDroppingProxy(upstream: string, drop: (request: Received, seen: number) => boolean) {
  const target = new URL(upstream);
  const forwarded: Received[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const received = { method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body: body.toString('utf8') };
      forwarded.push(received);
      const upstreamRequest = httpRequest(
        { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            if (drop(received, forwarded.length)) {
              incoming.socket.destroy();
              return;
            }
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(answerChunks));
          });
        },
      );
      upstreamRequest.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    forwarded,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('retries against the real server, through a proxy that drops the first answer', () => {
  const ctx = useSdkService();

  async function walletWith(svc: SvcClient) {
    const { user } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Retry' });
    return svc.wallets.create({ user_id: user.id, currency: 'USD' });
  }

  it('a credit whose answer was lost is retried with the same Idempotency-Key, replayed, and applied once', async () => {
    const wallet = await walletWith(ctx().client());
    const proxy = await startDroppingProxy(ctx().baseUrl, (request, seen) => request.url.endsWith('/credits') && seen === 1);
    try {
      const answers: ResponseInfo[] = [];
      const svc = ctx().client({ baseUrl: proxy.url, onResponse: (info) => answers.push(info) });
      const credit = await svc.wallets.addCredits(wallet.id, { amount: 100, description: 'Top-up' });

      expect(proxy.forwarded).toHaveLength(2);
      const [first, second] = proxy.forwarded.map((request) => request.headers['idempotency-key']);
      expect(first).toMatch(/^sdk_[0-9a-f-]{36}$/);
      expect(second).toBe(first);
      expect(answers).toEqual([expect.objectContaining({ attempt: 2, status: 201, replayed: true, idempotencyKey: first })]);
      expect(credit).toMatchObject({ amount: 100, balance_after: 100, idempotency_key: first });
      expect(await ctx().client().wallets.getBalance(wallet.id)).toEqual({
        credits: 100,
        currency: 'USD',
        available: 100,
        categories: [{ category: 'default', remaining: 100 }],
        debt: 0,
        credit_limit: 0,
      });
      expect((await ctx().client().wallets.transactions(wallet.id)).data).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("sends the body's idempotency_key as the header, and a transfer retried after a lost answer moves credits once", async () => {
    const svc = ctx().client();
    const from = await walletWith(svc);
    const to = await walletWith(svc);
    await svc.wallets.addCredits(from.id, { amount: 50, idempotency_key: 'seed' });
    const proxy = await startDroppingProxy(ctx().baseUrl, (request, seen) => request.url === '/v1/wallets/transfer' && seen === 1);
    try {
      const viaProxy = ctx().client({ baseUrl: proxy.url });
      const transfer = await viaProxy.wallets.transfer({
        from_wallet_id: from.id,
        to_wallet_id: to.id,
        amount: 20,
        idempotency_key: 'order-77',
      });
      expect(proxy.forwarded.map((request) => request.headers['idempotency-key'])).toEqual(['order-77', 'order-77']);
      expect(transfer).toMatchObject({ status: 'completed', amount: 20, idempotency_key: 'order-77' });
      expect((await svc.wallets.getBalance(from.id)).credits).toBe(30);
      expect((await svc.wallets.getBalance(to.id)).credits).toBe(20);
    } finally {
      await proxy.close();
    }
  });

  it('never retries a POST marked idempotencyKey: false', async () => {
    const svc = ctx().client();
    const wallet = await walletWith(svc);
    const proxy = await startDroppingProxy(ctx().baseUrl, () => true);
    try {
      const viaProxy = ctx().client({ baseUrl: proxy.url });
      await expect(viaProxy.wallets.addCredits(wallet.id, { amount: 5 }, { idempotencyKey: false })).rejects.toBeInstanceOf(
        SvcConnectionError,
      );
      expect(proxy.forwarded).toHaveLength(1);
      expect(proxy.forwarded[0]?.headers['idempotency-key']).toBeUndefined();
    } finally {
      await proxy.close();
    }
    // The credit did happen; only its answer was lost.
    expect((await svc.wallets.getBalance(wallet.id)).credits).toBe(5);
  });

  it('a refresh whose answer was lost is retried with the same key and answered with the same new session; the chain lives on', async () => {
    const svc = ctx().client();
    const { session } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Refresh' });
    const proxy = await startDroppingProxy(ctx().baseUrl, (request, seen) => request.url === '/v1/sessions/refresh' && seen === 1);
    try {
      const refreshed = await ctx().client({ baseUrl: proxy.url }).sessions.refresh({ refresh_token: session.refresh_token });
      const [first, second] = proxy.forwarded.map((request) => request.headers['idempotency-key']);
      expect(proxy.forwarded).toHaveLength(2);
      expect(second).toBe(first);
      expect(await svc.sessions.validate({ session_id: refreshed.session.id })).toMatchObject({ valid: true });
    } finally {
      await proxy.close();
    }
  });
});

describe('retries, timeouts and aborts against a loopback stub', () => {
  let answer: (request: Received, seen: number) => 'hang' | 'drop' | { status: number; body?: unknown; headers?: Record<string, string> };
  let stub: Awaited<ReturnType<typeof startStub>>;
  beforeAll(async () => {
    stub = await startStub((request, response, raw) => {
      const decision = answer(request, stub.received.length);
      if (decision === 'hang') return;
      if (decision === 'drop') return void raw.socket.destroy();
      json(response, decision.status, decision.body ?? {}, decision.headers);
    });
  });
  afterAll(() => stub.close());
  const client = (options: Partial<ConstructorParameters<typeof SvcClient>[0]> = {}) =>
    new SvcClient({ apiKey: 'svc_sk_test', baseUrl: stub.url, retryDelayInitialMs: 5, retryDelayMaxMs: 20, ...options });
  const failure = (status: number, code: string, headers: Record<string, string> = {}) => ({
    status,
    body: { error: { type: status === 429 ? 'rate_limit_error' : 'api_error', code, message: code, request_id: 'req_body' } },
    headers,
  });
  const reset = (handler: typeof answer) => {
    stub.received.length = 0;
    answer = handler;
  };
  const wallet = { id: 'wlt_1', object: 'wallet' };

  it('retries 5xx for a GET and for a keyed POST, with the same key each time, then succeeds', async () => {
    reset((_request, seen) => (seen < 3 ? failure(seen === 1 ? 503 : 500, 'internal_error') : { status: 200, body: wallet }));
    expect(await client().wallets.get('wlt_1')).toEqual(wallet);
    expect(stub.received).toHaveLength(3);

    reset((_request, seen) => (seen < 3 ? failure(500, 'internal_error') : { status: 201, body: wallet }));
    await client().wallets.create({ user_id: 'usr_1', currency: 'USD' });
    const keys = stub.received.map((request) => request.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^sdk_/);
    expect(stub.received.every((request) => request.headers.authorization === 'Bearer svc_sk_test')).toBe(true);
  });

  it('gives up after maxRetries with the last error, its code and request id', async () => {
    reset(() => failure(503, 'service_unavailable'));
    const error = (await client({ maxRetries: 3 })
      .wallets.get('wlt_1')
      .catch((caught: unknown) => caught)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect({ status: error.status, code: error.code, requestId: error.requestId }).toEqual({
      status: 503,
      code: 'service_unavailable',
      requestId: 'req_body',
    });
    expect(stub.received).toHaveLength(4);
    reset(() => failure(503, 'service_unavailable'));
    await expect(client().wallets.get('wlt_1', { maxRetries: 0 })).rejects.toMatchObject({ status: 503 });
    expect(stub.received).toHaveLength(1);
  });

  it('honours Retry-After on 429; a Retry-After over 60 s is thrown at once with retryAfterSeconds', async () => {
    reset((_request, seen) => (seen === 1 ? failure(429, 'rate_limited', { 'retry-after': '1' }) : { status: 200, body: wallet }));
    const started = Date.now();
    expect(await client().wallets.get('wlt_1')).toEqual(wallet);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(stub.received).toHaveLength(2);

    reset(() => failure(429, 'rate_limited', { 'retry-after': '120' }));
    await expect(client().wallets.get('wlt_1')).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 120 });
    expect(stub.received).toHaveLength(1);
  });

  it('retries 409 idempotency_key_in_use, but no other 409 and no 4xx', async () => {
    reset((_request, seen) => (seen === 1 ? failure(409, 'idempotency_key_in_use') : { status: 201, body: wallet }));
    await client().wallets.freeze('wlt_1');
    expect(stub.received).toHaveLength(2);
    for (const [status, code] of [
      [409, 'wallet_frozen'],
      [400, 'parameter_invalid'],
      [404, 'resource_missing'],
      [422, 'insufficient_credits'],
    ] as const) {
      reset(() => failure(status, code));
      await expect(client().wallets.deductCredits('wlt_1', { amount: 1 })).rejects.toMatchObject({ status, code });
      expect(stub.received).toHaveLength(1);
    }
  });

  it('log in carries an Idempotency-Key like every POST: retried with the same key after a 5xx and after a 429', async () => {
    reset((_request, seen) => (seen === 1 ? failure(500, 'internal_error') : { status: 200, body: {} }));
    await client().auth.login({ email: 'a@example.com', password: 'x' });
    expect(stub.received).toHaveLength(2);
    expect(stub.received[0]?.headers['idempotency-key']).toMatch(/^sdk_/);
    expect(stub.received[1]?.headers['idempotency-key']).toBe(stub.received[0]?.headers['idempotency-key']);

    reset((_request, seen) => (seen === 1 ? failure(429, 'rate_limited', { 'retry-after': '0' }) : { status: 200, body: {} }));
    await client().auth.login({ email: 'a@example.com', password: 'x' }, { format: 'token' });
    expect(stub.received.map((request) => request.url)).toEqual(['/v1/auth/login?format=token', '/v1/auth/login?format=token']);
  });

  it('retries a connection cut before any answer, then throws SvcConnectionError', async () => {
    reset((_request, seen) => (seen === 1 ? 'drop' : { status: 200, body: wallet }));
    expect(await client().wallets.get('wlt_1')).toEqual(wallet);
    expect(stub.received).toHaveLength(2);
    reset(() => 'drop');
    await expect(client({ maxRetries: 1 }).wallets.get('wlt_1')).rejects.toBeInstanceOf(SvcConnectionError);
    expect(stub.received).toHaveLength(2);
  });

  it('times out each attempt after timeoutMs, retries, then throws SvcTimeoutError', async () => {
    reset(() => 'hang');
    const error = await client({ timeoutMs: 100, maxRetries: 1 })
      .wallets.get('wlt_1')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SvcTimeoutError);
    expect((error as SvcTimeoutError).timeoutMs).toBe(100);
    expect(stub.received).toHaveLength(2);
  });

  it('an AbortSignal stops the call at once, in flight or in back-off, and is never retried', async () => {
    reset(() => 'hang');
    const controller = new AbortController();
    const pending = client().wallets.get('wlt_1', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(stub.received).toHaveLength(1);

    reset(() => failure(503, 'service_unavailable'));
    const backingOff = new AbortController();
    const started = Date.now();
    const retrying = client({ retryDelayInitialMs: 10_000, retryDelayMaxMs: 10_000 }).wallets.get('wlt_1', { signal: backingOff.signal });
    setTimeout(() => backingOff.abort(new Error('user left')), 100);
    await expect(retrying).rejects.toThrow('user left');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stub.received).toHaveLength(1);

    reset(() => ({ status: 200, body: wallet }));
    await expect(client().wallets.get('wlt_1', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(stub.received).toHaveLength(0);
  });

  it('oauth.start and oauth.callback call their paths (checked against a stub: a sign-in needs a real provider)', async () => {
    reset((request) =>
      request.url.endsWith('/callback')
        ? { status: 200, body: { user: { id: 'usr_1' }, session: { id: 'svc_ses_x' }, created: true } }
        : { status: 200, body: { url: 'https://accounts.example.com/auth?state=s1', state: 's1' } },
    );
    const svc = client();
    expect(await svc.auth.oauth.start('github', { redirect_uri: 'https://app.example.com/cb' })).toEqual({
      url: 'https://accounts.example.com/auth?state=s1',
      state: 's1',
    });
    const callback = await svc.auth.oauth.callback('github', { code: 'c0de', state: 's1' });
    expect(callback.created).toBe(true);
    expect(stub.received.map((request) => [request.method, request.url, JSON.parse(request.body) as unknown])).toEqual([
      ['POST', '/v1/auth/oauth/github', { redirect_uri: 'https://app.example.com/cb' }],
      ['POST', '/v1/auth/oauth/github/callback', { code: 'c0de', state: 's1' }],
    ]);
    // Both are replayable under their keys: the callback's answer (a new session) is stored sealed.
    expect(stub.received[0]?.headers['idempotency-key']).toMatch(/^sdk_/);
    expect(stub.received[1]?.headers['idempotency-key']).toMatch(/^sdk_/);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Fri, 20 Nov 2026 12:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });

  it('a base URL with or without /v1 reaches the same paths', async () => {
    reset(() => ({ status: 200, body: wallet }));
    await client({ baseUrl: `${stub.url}/v1/` }).wallets.get('wlt 1/x');
    expect(stub.received.map((request) => request.url)).toEqual(['/v1/wallets/wlt%201%2Fx']);
  });
});

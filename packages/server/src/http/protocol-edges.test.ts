import { connect, type AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestService } from '../test/service.js';

/**
 * The edges of HTTP itself (docs/api.md section 1): methods a path does not take, bodies that are
 * not UTF-8, bodies that never finish, clients that hang up, and who may read /metrics. None of
 * these reaches storage, so one dialect is enough.
 */

function expectError(response: LightMyRequestResponse, status: number, code: string): void {
  const body = response.json<{ error: { type: string; code: string; request_id: string } }>();
  expect({ status: response.statusCode, code: body.error.code, type: body.error.type }).toEqual({
    status,
    code,
    type: status === 401 ? 'authentication_error' : 'invalid_request_error',
  });
  expect(body.error.request_id).toBe(response.headers['request-id']);
}

interface RawExchange {
  /** Everything the server wrote before the connection closed. */
  readonly received: string;
  readonly elapsedMs: number;
}

/**
 * Writes `text` on a fresh TCP connection and waits for the server to close it; `hangUpAfterMs`
 * closes it from this side instead. A raw socket, because an HTTP client would not send a body
 * shorter than its own Content-Length.
 */
function exchange(port: number, text: string, options: { hangUpAfterMs?: number } = {}): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received, elapsedMs: performance.now() - started }));
    if (options.hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), options.hangUpAfterMs);
  });
}

/** A log that keeps its lines, to see at which level things were written. */
function capturedLogger(): { logger: pino.Logger; lines: () => Array<{ level: number; msg: string }> } {
  const written: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => written.push(line) });
  return { logger, lines: () => written.map((line) => JSON.parse(line) as { level: number; msg: string }) };
}

const PINO_ERROR = 50;
const PINO_INFO = 30;

describe('a known path with a method it does not take', () => {
  const ctx = useTestService('sqlite', { env: { CORS_ORIGINS: 'https://app.example.com' } });
  const inject = (method: 'GET' | 'PUT' | 'DELETE' | 'POST' | 'PATCH', url: string) => ctx().service.app.inject({ method, url });

  it('answers 405 method_not_allowed with Allow listing what it takes, before any credential is asked', async () => {
    const wallets = await inject('DELETE', '/v1/wallets');
    expectError(wallets, 405, 'method_not_allowed');
    expect(wallets.headers['allow']).toBe('GET, HEAD, POST');
    const user = await inject('PUT', '/v1/users/usr_0000000000000000000000');
    expectError(user, 405, 'method_not_allowed');
    expect(user.headers['allow']).toBe('DELETE, GET, HEAD, PATCH');
    const login = await inject('GET', '/v1/auth/login');
    expectError(login, 405, 'method_not_allowed');
    expect(login.headers['allow']).toBe('POST');
    expect((await inject('POST', '/healthz')).headers['allow']).toBe('GET, HEAD');
  });

  it('lists OPTIONS where CORS answers preflights', async () => {
    const me = await inject('PUT', '/v1/users/me');
    expectError(me, 405, 'method_not_allowed');
    expect(me.headers['allow']).toBe('DELETE, GET, HEAD, OPTIONS, PATCH');
  });

  it('keeps 404 route_not_found for a path no route has, whatever the method', async () => {
    expectError(await inject('GET', '/v1/nope'), 404, 'route_not_found');
    expectError(await inject('DELETE', '/v1/wallets/wlt_1/nope'), 404, 'route_not_found');
    expect((await inject('GET', '/v1/nope')).headers['allow']).toBeUndefined();
  });
});

describe('a body that is not UTF-8', () => {
  const ctx = useTestService('sqlite');
  const post = (payload: Buffer) =>
    ctx().service.app.inject({
      method: 'POST',
      url: '/v1/organizations',
      headers: { ...ctx().auth, 'content-type': 'application/json' },
      payload,
    });

  // Regression: such bytes were decoded to U+FFFD and the body accepted, altered.
  it('answers 400 body_invalid_json, and valid UTF-8 of every width goes through', async () => {
    const latin1 = Buffer.concat([Buffer.from('{"name": "Caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    expectError(await post(latin1), 400, 'body_invalid_json');
    const overlong = Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    expectError(await post(overlong), 400, 'body_invalid_json');
    const encodedSurrogate = Buffer.concat([Buffer.from('{"name": "'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    expectError(await post(encodedSurrogate), 400, 'body_invalid_json');
    const created = await post(Buffer.from(JSON.stringify({ name: 'Café Ünïcode 日本 😀' }), 'utf8'));
    expect(created.statusCode).toBe(201);
    expect(created.json().name).toBe('Café Ünïcode 日本 😀');
  });
});

describe('a body that stops short of its Content-Length, and a client that hangs up', () => {
  const log = capturedLogger();
  const ctx = useTestService('sqlite', { env: { REQUEST_TIMEOUT_MS: '1000' }, serviceOptions: { logger: log.logger } });
  let port = 0;
  const head = () =>
    `POST /v1/organizations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ctx().auth.authorization}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n';

  /** The request whose connection closed is logged once it is, at info, and nothing since `from` at error. */
  async function expectClosedConnectionLoggedAtInfo(from: number): Promise<void> {
    const closed = () =>
      log
        .lines()
        .slice(from)
        .find((line) => line.msg === 'connection closed before the answer');
    await expect.poll(closed).toBeDefined();
    expect(closed()?.level).toBe(PINO_INFO);
    expect(
      log
        .lines()
        .slice(from)
        .filter((line) => line.level >= PINO_ERROR),
    ).toEqual([]);
  }

  beforeAll(async () => {
    await ctx().service.app.listen({ host: '127.0.0.1', port: 0 });
    port = (ctx().service.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await ctx().service.app.close();
  });

  // Regression: the request held its connection for as long as the client kept the socket open.
  it('is cut off within REQUEST_TIMEOUT_MS with 408 request_timeout, the connection closed and nothing logged as an error', async () => {
    const before = log.lines().length;
    const answer = await exchange(port, `${head()}{"name": "`);
    expect(answer.elapsedMs).toBeGreaterThan(800);
    expect(answer.elapsedMs).toBeLessThan(1500);
    const [status, ...rest] = answer.received.split('\r\n');
    expect(status).toBe('HTTP/1.1 408 Request Timeout');
    const body = JSON.parse(rest.slice(rest.indexOf('') + 1).join('\r\n')) as { error: { code: string; type: string; request_id: string } };
    expect(body.error).toMatchObject({
      code: 'request_timeout',
      type: 'invalid_request_error',
      request_id: expect.stringMatching(/^req_/),
    });
    expect(rest).toContain(`Request-Id: ${body.error.request_id}`);
    await expectClosedConnectionLoggedAtInfo(before);
  });

  // Regression: a hang-up while the body was read was logged as an error (a database outage, even).
  it('logs a client that hangs up mid-body at info, not as an error', async () => {
    const before = log.lines().length;
    const answer = await exchange(port, `${head()}{"name": "`, { hangUpAfterMs: 100 });
    expect(answer.received).toBe('');
    await expectClosedConnectionLoggedAtInfo(before);
  });
});

describe('GET /metrics in production', () => {
  const production = { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525', SECRETS_ENCRYPTION_KEY: 'a'.repeat(64) };
  const quiet = { serviceOptions: { logger: pino({ level: 'silent' }) } };

  describe('without METRICS_TOKEN', () => {
    const ctx = useTestService('sqlite', { env: production, ...quiet });

    it('answers 404 route_not_found, for every method', async () => {
      expectError(await ctx().service.app.inject({ method: 'GET', url: '/metrics' }), 404, 'route_not_found');
      expectError(await ctx().service.app.inject({ method: 'POST', url: '/metrics' }), 404, 'route_not_found');
      expect((await ctx().service.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    });
  });

  describe('with METRICS_TOKEN', () => {
    const token = 'production-metrics-token-0123456789';
    const ctx = useTestService('sqlite', { env: { ...production, METRICS_TOKEN: token }, ...quiet });
    const scrape = (headers: Record<string, string> = {}) => ctx().service.app.inject({ method: 'GET', url: '/metrics', headers });

    it('answers only Authorization: Bearer <METRICS_TOKEN>, 401 in the error shape otherwise', async () => {
      expect((await scrape({ authorization: `Bearer ${token}` })).body).toContain('http_requests_total');
      expectError(await scrape(), 401, 'credential_missing');
      const wrong = await scrape({ authorization: 'Bearer production-metrics-token-0123456780' });
      expectError(wrong, 401, 'metrics_token_invalid');
      expect(wrong.body).not.toContain(token);
    });
  });
});

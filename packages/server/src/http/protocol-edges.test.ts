import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
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

import { Type } from '@sinclair/typebox';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../test/database.js';
import { useTestService } from '../test/service.js';
import type { RouteModule } from '../lib/routes.js';
import { requireSecretKey } from '../lib/principal.js';
import { StrictObject } from '../lib/schemas.js';

/** Routes that exist only in these tests, to reach every branch of the error handling. */
const testRoutes: RouteModule = (app) => {
  app.post(
    '/v1/test/echo',
    {
      config: { credential: 'secret' },
      schema: {
        body: StrictObject({
          name: Type.String({ minLength: 1 }),
          amount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
          metadata: Type.Optional(StrictObject({ plan: Type.Optional(Type.String()) })),
        }),
      },
    },
    (request) => ({ project: requireSecretKey(request).projectId, body: request.body }),
  );
  app.get(
    '/v1/test/items',
    {
      config: { credential: 'secret' },
      schema: { querystring: StrictObject({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }) },
    },
    (request) => ({
      query: request.query,
    }),
  );
  app.get('/v1/test/boom', { config: { credential: 'secret' } }, () => {
    throw new Error('select secret_column from hidden_table where 1=1');
  });
  app.get('/v1/test/me', { config: { credential: 'session' } }, () => ({ ok: true }));
  app.post('/v1/test/freeze', { config: { credential: 'secret' } }, () => ({ frozen: true }));
};

interface ErrorBody {
  type: string;
  code: string;
  message: string;
  param?: string;
  request_id: string;
}

function errorOf(response: LightMyRequestResponse): ErrorBody {
  return response.json<{ error: ErrorBody }>().error;
}

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  expect({ status: response.statusCode, code: errorOf(response).code }).toEqual({ status, code });
  if (param !== undefined) expect(errorOf(response).param).toBe(param);
  expect(errorOf(response).request_id).toBe(response.headers['request-id']);
}

describeEachDialect('HTTP errors and credentials', (dialect) => {
  const ctx = useTestService(dialect, { serviceOptions: { routeModules: [testRoutes] } });
  const inject = (options: InjectOptions) => ctx().service.app.inject(options);

  describe('every response', () => {
    it('carries a Request-Id that errors repeat in the body', async () => {
      const ok = await inject({ method: 'GET', url: '/healthz' });
      expect(ok.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
      const notFound = await inject({ method: 'GET', url: '/v1/nope' });
      expectError(notFound, 404, 'route_not_found');
      expect(errorOf(notFound).type).toBe('invalid_request_error');
    });
  });

  describe('bodies', () => {
    const post = (payload: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
      inject({ method: 'POST', url: '/v1/test/echo', headers: { ...ctx().auth, ...headers }, payload });

    it('accepts a valid JSON body', async () => {
      const response = await post(JSON.stringify({ name: 'a', amount: 5 }));
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ project: ctx().projectId, body: { name: 'a', amount: 5 } });
    });
    it('answers malformed JSON with 400 body_invalid_json', async () => expectError(await post('{"name": '), 400, 'body_invalid_json'));
    it('answers an empty JSON body with 400 body_invalid_json', async () => expectError(await post(''), 400, 'body_invalid_json'));
    it('answers a __proto__ key (valid JSON) with 400 parameter_unknown naming it', async () =>
      expectError(await post('{"name":"a","__proto__":{"admin":true}}'), 400, 'parameter_unknown', '__proto__'));
    it('answers another content type with 415', async () => {
      expectError(await post('name=a', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
      expectError(await post('{"name":"a"}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
      // Regression: JSON in another character set was read as if it were UTF-8.
      expectError(await post('{"name":"a"}', { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported_media_type');
      expect((await post('{"name":"a"}', { 'content-type': 'application/json; charset=UTF-8' })).statusCode).toBe(200);
      expect((await post('{"name":"a"}', { 'content-type': 'application/json;charset="utf-8"' })).statusCode).toBe(200);
    });
    it('answers a body over 1 MiB with 413', async () =>
      expectError(await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024) })), 413, 'body_too_large'));
    it('answers an unknown field with 400 parameter_unknown naming it', async () => {
      expectError(await post(JSON.stringify({ name: 'a', colour: 'red' })), 400, 'parameter_unknown', 'colour');
      expectError(await post(JSON.stringify({ name: 'a', metadata: { tier: 'x' } })), 400, 'parameter_unknown', 'metadata.tier');
    });
    it('answers a missing field with 400 parameter_missing naming it', async () =>
      expectError(await post(JSON.stringify({ amount: 1 })), 400, 'parameter_missing', 'name'));
    it('answers a missing body with 400 parameter_missing', async () => {
      const response = await inject({ method: 'POST', url: '/v1/test/echo', headers: ctx().auth });
      expectError(response, 400, 'parameter_missing');
    });
    it('never coerces body types: a string, float, zero or negative amount is parameter_invalid', async () => {
      for (const amount of ['100', 1.5, 0, -5, 1e13, null, true]) {
        expectError(await post(JSON.stringify({ name: 'a', amount })), 400, 'parameter_invalid', 'amount');
      }
    });
    it('answers a body that is not an object with 400', async () => {
      const response = await post('[1,2]');
      expect(response.statusCode).toBe(400);
      expect(['parameter_missing', 'parameter_invalid']).toContain(errorOf(response).code);
    });
    it('ignores a body on a route that takes none', async () => {
      const response = await inject({
        method: 'POST',
        url: '/v1/test/freeze',
        headers: { ...ctx().auth, 'content-type': 'application/json' },
        payload: '{"x":1}',
      });
      expect(response.statusCode).toBe(200);
    });
  });

  describe('query strings', () => {
    it('coerces query parameters to their types and refuses unknown ones', async () => {
      const ok = await inject({ method: 'GET', url: '/v1/test/items?limit=5', headers: ctx().auth });
      expect(ok.json()).toEqual({ query: { limit: 5 } });
      expectError(await inject({ method: 'GET', url: '/v1/test/items?limit=500', headers: ctx().auth }), 400, 'parameter_invalid', 'limit');
      expectError(await inject({ method: 'GET', url: '/v1/test/items?limt=5', headers: ctx().auth }), 400, 'parameter_unknown', 'limt');
    });
  });

  describe('bugs', () => {
    it('answer 500 internal_error with no stack trace or SQL', async () => {
      const response = await inject({ method: 'GET', url: '/v1/test/boom', headers: ctx().auth });
      expectError(response, 500, 'internal_error');
      expect(errorOf(response).type).toBe('api_error');
      expect(response.body).not.toMatch(/select|hidden_table|at .*\.ts|Error:/i);
    });
  });

  describe('credential guard (docs/api.md section 3)', () => {
    const get = (headers: Record<string, string>) => inject({ method: 'GET', url: '/v1/project', headers });

    it('accepts a secret key as Bearer or as X-API-Key', async () => {
      const bearer = await get(ctx().auth);
      expect(bearer.statusCode).toBe(200);
      expect(bearer.json()).toMatchObject({ id: ctx().projectId, object: 'project', name: 'Test project' });
      expect((await get({ 'x-api-key': ctx().secretKey })).statusCode).toBe(200);
    });
    it('answers no credential with 401 credential_missing', async () => {
      expectError(await get({}), 401, 'credential_missing');
      expect(errorOf(await get({})).type).toBe('authentication_error');
    });
    it('answers an unknown, malformed or non-Bearer credential with 401 invalid_api_key', async () => {
      expectError(await get({ authorization: 'Bearer svc_sk_unknownunknownunknownunknownunknown12' }), 401, 'invalid_api_key');
      expectError(await get({ authorization: 'Bearer nonsense' }), 401, 'invalid_api_key');
      expectError(await get({ authorization: `Basic ${Buffer.from(`${ctx().secretKey}:`).toString('base64')}` }), 401, 'invalid_api_key');
      expectError(await get({ 'x-api-key': `${ctx().secretKey}x` }), 401, 'invalid_api_key');
    });
    it('answers a session token on a secret-key route with 403 secret_key_required', async () => {
      const response = await get({ authorization: 'Bearer svc_ses_AAAAAAAAAAAAAAAAAAAAAAAA.x' });
      expectError(response, 403, 'secret_key_required');
      expect(errorOf(response).type).toBe('permission_error');
    });
    it('answers a secret key on a session route with 403 session_token_required', async () => {
      expectError(await inject({ method: 'GET', url: '/v1/test/me', headers: ctx().auth }), 403, 'session_token_required');
    });
    it('answers an unknown session token on a session route with 401 session_invalid', async () => {
      const response = await inject({
        method: 'GET',
        url: '/v1/test/me',
        headers: { authorization: 'Bearer svc_ses_AAAAAAAAAAAAAAAAAAAAAAAA.x' },
      });
      expectError(response, 401, 'session_invalid');
    });
    it('refuses a revoked key at once in the process that revoked it', async () => {
      const { apiKey, secretKey } = await ctx().service.projects.createKey(ctx().projectId, { name: 'to revoke' });
      expect((await get({ authorization: `Bearer ${secretKey}` })).statusCode).toBe(200);
      await ctx().service.projects.revokeKey(ctx().projectId, apiKey.id);
      expectError(await get({ authorization: `Bearer ${secretKey}` }), 401, 'invalid_api_key');
    });
    it('scopes a key to its own project', async () => {
      const other = await ctx().service.projects.createProject({ name: 'Other project' });
      const response = await get({ authorization: `Bearer ${other.secretKey}` });
      expect(response.json()).toMatchObject({ id: other.project.id, name: 'Other project' });
      expect(other.project.id).not.toBe(ctx().projectId);
    });
    it('never stores a key, only its hash, and lists keys by prefix and last four', async () => {
      const keys = await ctx().service.projects.listKeys(ctx().projectId);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key.prefix).toMatch(/^svc_sk_[0-9A-Za-z]{4}$/);
        expect(key.last4).toMatch(/^[0-9A-Za-z]{4}$/);
        expect(JSON.stringify(key)).not.toContain(ctx().secretKey);
      }
      const rows = await ctx().service.db.kysely.selectFrom('api_keys').selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(ctx().secretKey);
    });
  });

  describe('operations', () => {
    it('serves health, readiness, metrics and the OpenAPI document without a credential', async () => {
      expect((await inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      expect((await inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
      const metrics = await inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/http_requests_total\{method="GET",route="\/readyz",status="200"\} \d+/);
      expect(metrics.body).toContain('http_request_duration_seconds_bucket');
      const openapi = await inject({ method: 'GET', url: '/v1/openapi.json' });
      expect(openapi.json()).toMatchObject({ openapi: '3.1.0', paths: { '/v1/project': { get: expect.any(Object) } } });
      expect((await inject({ method: 'GET', url: '/docs/' })).statusCode).toBe(200);
    });
  });
});

import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSessionJwtVerifier,
  type ExpressLikeRequest,
  type SessionJwtClaims,
  type SessionMiddlewareOptions,
  sessionJwtHook,
  sessionJwtMiddleware,
  tokenFrom,
  withSession,
} from '../src/session-jwt/index.js';
import { makeKey, sessionClaims, sign, type SigningKey, useJwksServer } from './jwks-server.js';

/** What a refusal's body looks like: the service's error shape. */
interface RefusalBody {
  error: { type: string; code: string; message: string };
}

describe('session JWT middleware', () => {
  const jwks = useJwksServer('prj_middleware');
  let key: SigningKey;
  let valid: string;
  let expired: string;
  let options: SessionMiddlewareOptions;
  beforeAll(async () => {
    key = await makeKey('ES256');
    jwks().publish([key]);
    const nowSeconds = Math.floor(Date.now() / 1000);
    valid = await sign(key, sessionClaims(jwks(), nowSeconds));
    expired = await sign(key, { ...sessionClaims(jwks(), nowSeconds - 600) });
    options = { baseUrl: jwks().baseUrl, projectId: jwks().projectId, cookieName: 'svc_jwt' };
  });

  describe('Express', () => {
    /** The least of Express's req, res and next: what the middleware may rely on, and what it did. */
    async function run(headers: Record<string, string>) {
      const request: ExpressLikeRequest = { headers };
      const response = { statusCode: 200, headers: {} as Record<string, string>, body: undefined as string | undefined };
      const nextCalls: unknown[][] = [];
      await new Promise<void>((resolve) => {
        sessionJwtMiddleware(options)(
          request,
          {
            get statusCode() {
              return response.statusCode;
            },
            set statusCode(status) {
              response.statusCode = status;
            },
            setHeader: (name, value) => (response.headers[name] = value),
            end: (body) => {
              response.body = body;
              resolve();
            },
          },
          (...args: unknown[]) => {
            nextCalls.push(args);
            resolve();
          },
        );
      });
      return { request, response, nextCalls };
    }

    it('sets req.svcSession and calls next for a valid bearer token', async () => {
      const { request, response, nextCalls } = await run({ authorization: `Bearer ${valid}` });
      expect(nextCalls).toEqual([[]]);
      expect(request.svcSession?.sub).toBe('usr_ada');
      expect(response.body).toBeUndefined();
    });

    it('reads the named cookie when there is no Authorization header', async () => {
      const { request } = await run({ cookie: `theme=dark; svc_jwt=${valid}; other=1` });
      expect(request.svcSession?.sid).toBe('svc_ses_0123456789abcdefghijklmn');
    });

    it('answers 401 in the service error shape, without calling next', async () => {
      const { response, nextCalls } = await run({ authorization: `Bearer ${expired}` });
      expect(nextCalls).toEqual([]);
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect((JSON.parse(response.body ?? '') as RefusalBody).error).toMatchObject({ type: 'authentication_error', code: 'expired' });
      const missing = await run({});
      expect(missing.response.statusCode).toBe(401);
      expect((JSON.parse(missing.response.body ?? '') as RefusalBody).error.code).toBe('credential_missing');
    });
  });

  describe('Fastify', () => {
    const app = Fastify();
    beforeAll(async () => {
      app.decorateRequest('svcSession', undefined);
      app.addHook('onRequest', sessionJwtHook(options));
      app.get('/me', (request) => ({ sub: (request as { svcSession?: SessionJwtClaims }).svcSession?.sub }));
      await app.ready();
    });
    afterAll(() => app.close());

    it('runs the route with request.svcSession for a valid token', async () => {
      const response = await app.inject({ url: '/me', headers: { authorization: `Bearer ${valid}` } });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ sub: 'usr_ada' });
    });

    it('answers 401 without running the route', async () => {
      const response = await app.inject({ url: '/me', headers: { authorization: `Bearer ${valid.slice(0, -20)}` } });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(response.json<RefusalBody>().error.code).toBe('invalid_signature');
    });
  });

  describe('Next.js route handlers', () => {
    const handler = (request: Request, context: { params: Promise<{ id: string }> }, session: SessionJwtClaims) =>
      context.params.then((params) => Response.json({ sub: session.sub, id: params.id, method: request.method }));

    it('calls the handler with the claims for a valid token', async () => {
      const GET = withSession(handler, options);
      const response = await GET(new Request('http://app.example/items/7', { headers: { authorization: `bearer ${valid}` } }), {
        params: Promise.resolve({ id: '7' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sub: 'usr_ada', id: '7', method: 'GET' });
    });

    it('answers 401 JSON without calling the handler', async () => {
      let called = false;
      const GET = withSession(() => {
        called = true;
        return new Response('no');
      }, options);
      const response = await GET(new Request('http://app.example/items/7', { headers: { cookie: `svc_jwt=${expired}` } }), {});
      expect(called).toBe(false);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(((await response.json()) as RefusalBody).error.code).toBe('expired');
    });

    it('answers 503 when the key set cannot be fetched: the token was not checked', async () => {
      const GET = withSession(handler, { baseUrl: 'http://127.0.0.1:9', projectId: 'prj_middleware', jwksTimeoutMs: 1_000 });
      const response = await GET(new Request('http://app.example/', { headers: { authorization: `Bearer ${valid}` } }), {
        params: Promise.resolve({ id: '1' }),
      });
      expect(response.status).toBe(503);
      expect(((await response.json()) as RefusalBody).error).toMatchObject({ type: 'api_error', code: 'jwks_unavailable' });
    });
  });

  it('shares one verifier, and its cached keys, between middlewares', async () => {
    const verifier = createSessionJwtVerifier(options);
    jwks().requests = 0;
    const express = sessionJwtMiddleware({ ...options, verifier });
    const next = withSession(() => new Response('ok'), { ...options, verifier });
    await next(new Request('http://app.example/', { headers: { authorization: `Bearer ${valid}` } }), {});
    await new Promise<void>((resolve) => {
      express(
        { headers: { authorization: `Bearer ${valid}` } },
        { statusCode: 200, setHeader: () => undefined, end: () => resolve() },
        () => resolve(),
      );
    });
    expect(jwks().requests).toBe(1);
  });

  it('reads a bearer token, else the named cookie, and nothing else', () => {
    expect(tokenFrom('Bearer abc', 'svc_jwt=def', 'svc_jwt')).toBe('abc');
    expect(tokenFrom('Basic abc', 'svc_jwt=def', 'svc_jwt')).toBe('def');
    expect(tokenFrom(undefined, 'svc_jwt=def', undefined)).toBeUndefined();
    expect(tokenFrom(undefined, 'svc_jwt2=def; xsvc_jwt=ghi', 'svc_jwt')).toBeUndefined();
    expect(tokenFrom('Bearer a b', undefined, undefined)).toBeUndefined();
  });
});

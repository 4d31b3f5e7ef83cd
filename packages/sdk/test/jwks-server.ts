import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll } from 'vitest';

export type Algorithm = 'ES256' | 'RS256' | 'EdDSA';

export interface SigningKey {
  readonly kid: string;
  readonly alg: Algorithm;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

export interface JwksServer {
  readonly baseUrl: string;
  readonly projectId: string;
  readonly issuer: string;
  /** Requests the key set has answered; a test may set it back to 0. */
  requests: number;
  /** What the next requests are answered: the public keys to publish, or a status to fail with. */
  publish(keys: readonly SigningKey[], options?: { maxAgeSeconds?: number; status?: number }): void;
}

let kids = 0;

export async function makeKey(alg: Algorithm): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `key_${alg.toLowerCase()}_${++kids}`;
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** The claims the service puts in a session JWT (CONTRACT 9.3), valid for 300 s from `nowSeconds`. */
export function sessionClaims(server: JwksServer, nowSeconds: number): JWTPayload {
  return {
    iss: server.issuer,
    aud: server.projectId,
    sub: 'usr_ada',
    sid: 'svc_ses_0123456789abcdefghijklmn',
    iat: nowSeconds,
    exp: nowSeconds + 300,
    email: 'ada@example.com',
    email_verified: true,
    roles: ['admin'],
    amr: ['pwd'],
  };
}

/** A JWT signed as the service signs one; `claims` replaces or adds claims, `header` header fields. */
export function sign(key: SigningKey, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header }).sign(key.privateKey);
}

/** A key-set endpoint on loopback for the enclosing describe block, counting its requests. */
export function useJwksServer(projectId = 'prj_jwt_test'): () => JwksServer {
  let published: { body: string; maxAgeSeconds: number; status: number } = { body: '{"keys":[]}', maxAgeSeconds: 300, status: 200 };
  const server = createServer((request, response) => {
    if (request.url !== `/v1/projects/${projectId}/jwks.json`) {
      response.writeHead(404).end();
      return;
    }
    state.requests += 1;
    response
      .writeHead(published.status, { 'content-type': 'application/json', 'cache-control': `public, max-age=${published.maxAgeSeconds}` })
      .end(published.body);
  });
  let state: JwksServer;
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    state = {
      baseUrl,
      projectId,
      issuer: `${baseUrl}/v1/projects/${projectId}`,
      requests: 0,
      publish(keys, options = {}) {
        published = {
          body: JSON.stringify({ keys: keys.map((key) => key.jwk) }),
          maxAgeSeconds: options.maxAgeSeconds ?? 300,
          status: options.status ?? 200,
        };
      },
    };
  });
  afterAll(async () => {
    server.close();
    await once(server, 'close');
  });
  return () => state;
}

import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSessionJwtVerifier,
  SessionJwtError,
  type SessionJwtErrorCode,
  type SessionJwtVerifierOptions,
  verifySessionJwt,
} from '../src/session-jwt/index.js';
import { VerifiedTokens } from '../src/session-jwt/verified-tokens.js';
import { type Algorithm, makeKey, sessionClaims, sign, type SigningKey, useJwksServer } from './jwks-server.js';

const START_MS = Date.UTC(2026, 10, 27, 12, 0, 0);

/** A verifier on a clock the test moves by hand. */
function makeVerifier(server: { baseUrl: string; projectId: string }, options: Partial<SessionJwtVerifierOptions> = {}) {
  const clock = { nowMs: START_MS };
  const verifier = createSessionJwtVerifier({ baseUrl: server.baseUrl, projectId: server.projectId, nowMs: () => clock.nowMs, ...options });
  return { verifier, clock, nowSeconds: () => Math.floor(clock.nowMs / 1000) };
}

async function refusal(promise: Promise<unknown>): Promise<SessionJwtErrorCode> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SessionJwtError);
  return (error as SessionJwtError).code;
}

/** The same token with one character of its signature changed (not the last, whose low bits base64url may ignore). */
function tampered(jwt: string): string {
  const at = jwt.lastIndexOf('.') + 10;
  return jwt.slice(0, at) + (jwt[at] === 'A' ? 'B' : 'A') + jwt.slice(at + 1);
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('verifySessionJwt against a key set on loopback', () => {
  const jwks = useJwksServer();
  const keys = {} as Record<Algorithm, SigningKey>;
  beforeAll(async () => {
    for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) keys[alg] = await makeKey(alg);
  });
  beforeEach(() => {
    jwks().publish(Object.values(keys));
    jwks().requests = 0;
  });

  for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
    it(`returns the claims of a valid ${alg} token`, async () => {
      const { verifier, nowSeconds } = makeVerifier(jwks());
      const claims = sessionClaims(jwks(), nowSeconds());
      const verified = await verifier.verify(await sign(keys[alg], claims));
      expect(verified).toEqual(claims);
      expect(Object.isFrozen(verified)).toBe(true);
    });

    it(`refuses a ${alg} token whose signature or payload was changed`, async () => {
      const { verifier, nowSeconds } = makeVerifier(jwks());
      const jwt = await sign(keys[alg], sessionClaims(jwks(), nowSeconds()));
      expect(await refusal(verifier.verify(tampered(jwt)))).toBe('invalid_signature');
      const [header, , signature] = jwt.split('.');
      const promoted = `${header}.${base64url({ ...sessionClaims(jwks(), nowSeconds()), roles: ['owner'] })}.${signature}`;
      expect(await refusal(verifier.verify(promoted))).toBe('invalid_signature');
    });
  }

  it('refuses a token past its exp, beyond the clock tolerance only', async () => {
    const { verifier, clock, nowSeconds } = makeVerifier(jwks(), { clockToleranceSeconds: 5 });
    const jwt = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), exp: nowSeconds() - 3 });
    expect((await verifier.verify(jwt)).sub).toBe('usr_ada');
    clock.nowMs += 3_000;
    const later = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), exp: nowSeconds() - 5 });
    expect(await refusal(verifier.verify(later))).toBe('expired');
  });

  it('refuses a token whose nbf is ahead', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks(), { clockToleranceSeconds: 0 });
    const jwt = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), nbf: nowSeconds() + 60 });
    expect(await refusal(verifier.verify(jwt))).toBe('not_yet_valid');
  });

  it('refuses a token for another project or from another issuer', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks());
    const otherAudience = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), aud: 'prj_other' });
    expect(await refusal(verifier.verify(otherAudience))).toBe('wrong_audience');
    const otherIssuer = await sign(keys.ES256, {
      ...sessionClaims(jwks(), nowSeconds()),
      iss: 'https://evil.example/v1/projects/prj_jwt_test',
    });
    expect(await refusal(verifier.verify(otherIssuer))).toBe('wrong_issuer');
    // The issuer names the project too: a token of another project of the same service is refused.
    const otherProject = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), iss: `${jwks().baseUrl}/v1/projects/prj_other` });
    expect(await refusal(verifier.verify(otherProject))).toBe('wrong_issuer');
  });

  it('refuses alg none, algorithms it does not allow and what is not a JWT, without fetching keys', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks());
    const payload = base64url(sessionClaims(jwks(), nowSeconds()));
    const refused = [
      `${base64url({ alg: 'none', kid: keys.ES256.kid })}.${payload}.`,
      `${base64url({ alg: 'none', kid: keys.ES256.kid })}.${payload}.c2ln`,
      `${base64url({ alg: 'HS256', kid: keys.ES256.kid })}.${payload}.c2ln`,
      `${base64url({ alg: 'ES256' })}.${payload}.c2ln`,
      `${base64url({ alg: 'ES256', kid: keys.ES256.kid, crit: ['b64'], b64: false })}.${payload}.c2ln`,
      `${base64url({ alg: 'ES256', kid: keys.ES256.kid })}.${payload}.c2l+`,
      `${base64url(['ES256'])}.${payload}.c2ln`,
      `bm90IGpzb24.${payload}.c2ln`,
      'abc',
      'a.b.c.d',
      '',
      `${base64url({ alg: 'ES256', kid: keys.ES256.kid })}.${'A'.repeat(20_000)}.c2ln`,
    ];
    for (const jwt of refused) expect(await refusal(verifier.verify(jwt))).toBe('malformed');
    expect(jwks().requests).toBe(0);
  });

  it('refuses a token whose header names another algorithm than its key verifies', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks());
    // Signed with the Ed25519 key, but claiming the P-256 key's kid.
    const jwt = await sign(keys.EdDSA, sessionClaims(jwks(), nowSeconds()), { kid: keys.ES256.kid });
    expect(await refusal(verifier.verify(jwt))).toBe('invalid_signature');
  });

  it('refuses signed claims of the wrong types as malformed', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks());
    const changes: Record<string, unknown>[] = [
      { exp: String(nowSeconds() + 60) },
      { sid: 42 },
      { roles: 'admin' },
      { email_verified: 'yes' },
    ];
    for (const change of changes) {
      const jwt = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), ...change });
      expect(await refusal(verifier.verify(jwt))).toBe('malformed');
    }
  });

  it('fetches the key set once, then verifies without a request per token', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks());
    const tokens = await Promise.all(
      Array.from({ length: 30 }, (_, index) => sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), sub: `usr_${index}` })),
    );
    // Concurrent first verifications share one fetch.
    await Promise.all(tokens.map((jwt) => verifier.verify(jwt)));
    for (const jwt of tokens) await verifier.verify(jwt);
    expect(jwks().requests).toBe(1);
  });

  it('fetches again for an unknown kid and then accepts the rotated key', async () => {
    const { verifier, clock, nowSeconds } = makeVerifier(jwks());
    await verifier.verify(await sign(keys.ES256, sessionClaims(jwks(), nowSeconds())));
    const next = await makeKey('ES256');
    jwks().publish([keys.ES256, next]);
    clock.nowMs += 31_000;
    const claims = await verifier.verify(await sign(next, sessionClaims(jwks(), nowSeconds())));
    expect(claims.sub).toBe('usr_ada');
    expect(jwks().requests).toBe(2);
  });

  it('fetches for unknown kids at most once per 30 s', async () => {
    const { verifier, clock, nowSeconds } = makeVerifier(jwks());
    const stranger = await makeKey('ES256');
    const jwt = await sign(stranger, sessionClaims(jwks(), nowSeconds()));
    expect(await refusal(verifier.verify(jwt))).toBe('unknown_key');
    expect(jwks().requests).toBe(1);
    for (const elapsedMs of [1_000, 10_000, 29_000]) {
      clock.nowMs = START_MS + elapsedMs;
      expect(await refusal(verifier.verify(jwt))).toBe('unknown_key');
    }
    expect(jwks().requests).toBe(1);
    // The key appears within the 30 s: still refused until the interval has passed, then accepted.
    jwks().publish([keys.ES256, stranger]);
    clock.nowMs = START_MS + 29_999;
    expect(await refusal(verifier.verify(jwt))).toBe('unknown_key');
    clock.nowMs = START_MS + 30_000;
    expect((await verifier.verify(jwt)).sub).toBe('usr_ada');
    expect(jwks().requests).toBe(2);
  });

  it('fetches the key set again past its max-age, without holding up verification', async () => {
    jwks().publish(Object.values(keys), { maxAgeSeconds: 60 });
    const { verifier, clock, nowSeconds } = makeVerifier(jwks());
    await verifier.verify(await sign(keys.RS256, sessionClaims(jwks(), nowSeconds())));
    clock.nowMs += 59_000;
    await verifier.verify(await sign(keys.RS256, sessionClaims(jwks(), nowSeconds())));
    expect(jwks().requests).toBe(1);
    clock.nowMs += 2_000;
    await verifier.verify(await sign(keys.RS256, sessionClaims(jwks(), nowSeconds())));
    for (let waited = 0; jwks().requests < 2 && waited < 5_000; waited += 10) await sleep(10);
    expect(jwks().requests).toBe(2);
  });

  it('says jwks_unavailable while the key set cannot be fetched, and retries at most once a second', async () => {
    jwks().publish([], { status: 503 });
    const { verifier, clock, nowSeconds } = makeVerifier(jwks());
    const jwt = await sign(keys.EdDSA, sessionClaims(jwks(), nowSeconds()));
    expect(await refusal(verifier.verify(jwt))).toBe('jwks_unavailable');
    jwks().publish(Object.values(keys));
    clock.nowMs += 500;
    expect(await refusal(verifier.verify(jwt))).toBe('jwks_unavailable');
    expect(jwks().requests).toBe(1);
    clock.nowMs += 500;
    expect((await verifier.verify(jwt)).sub).toBe('usr_ada');
    expect(jwks().requests).toBe(2);
  });

  it('keeps a verified token no later than its exp', async () => {
    const { verifier, clock, nowSeconds } = makeVerifier(jwks(), { clockToleranceSeconds: 0 });
    const jwt = await sign(keys.ES256, { ...sessionClaims(jwks(), nowSeconds()), exp: nowSeconds() + 10 });
    const first = await verifier.verify(jwt);
    clock.nowMs += 9_999;
    expect(await verifier.verify(jwt)).toBe(first);
    clock.nowMs += 1;
    expect(await refusal(verifier.verify(jwt))).toBe('expired');
  });

  it('works without the verified-token cache', async () => {
    const { verifier, nowSeconds } = makeVerifier(jwks(), { verifiedTokenCacheSize: 0 });
    const jwt = await sign(keys.ES256, sessionClaims(jwks(), nowSeconds()));
    const first = await verifier.verify(jwt);
    expect(await verifier.verify(jwt)).not.toBe(first);
    expect(await verifier.verify(jwt)).toEqual(first);
  });

  it('shares one default verifier per project', async () => {
    const options = { baseUrl: `${jwks().baseUrl}/`, projectId: jwks().projectId };
    const jwt = await sign(keys.ES256, sessionClaims(jwks(), Math.floor(Date.now() / 1000)));
    const first = await verifySessionJwt(jwt, options);
    expect(await verifySessionJwt(jwt, options)).toBe(first);
    expect(jwks().requests).toBe(1);
  });
});

describe('the verified-token cache', () => {
  const claims = (exp: number) => ({ exp });

  it('drops the least recently used token beyond its size', () => {
    const cache = new VerifiedTokens<{ exp: number }>(2);
    cache.set('a', claims(100));
    cache.set('b', claims(100));
    expect(cache.get('a', 0)).toBeDefined();
    cache.set('c', claims(100));
    expect(cache.size).toBe(2);
    expect(cache.get('b', 0)).toBeUndefined();
    expect(cache.get('a', 0)).toBeDefined();
    expect(cache.get('c', 0)).toBeDefined();
  });

  it('never returns a token at or past its exp, and forgets it', () => {
    const cache = new VerifiedTokens<{ exp: number }>(10);
    cache.set('a', claims(100));
    expect(cache.get('a', 99.9)).toBeDefined();
    expect(cache.get('a', 100)).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/src/test/serve-process.js';
import { useTestService } from '../../server/src/test/service.js';
import { createSessionJwtVerifier, SessionJwtError } from '../src/session-jwt/index.js';

/**
 * The SDK's offline verification against the real service's JWTs and JWKS (docs/adr/0020-session-jwts.md):
 * a session's JWT verifies with the claims the service put in it, through a rotation of the
 * project's signing key; a token of another project does not.
 */

const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;

describe('verifySessionJwt against the service', () => {
  const ctx = useTestService('sqlite', { env: { PUBLIC_URL: baseUrl } });
  beforeAll(async () => {
    await ctx().service.app.listen({ host: '127.0.0.1', port });
  });

  const signUp = async (email: string) => {
    const response = await fetch(`${baseUrl}/v1/auth/signup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx().secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery staple 42' }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { user: { id: string }; session: { id: string; jwt: string } };
  };

  it('verifies a session JWT of the service, also after a key rotation, with the key set fetched once', async () => {
    let fetches = 0;
    const verifier = createSessionJwtVerifier({
      baseUrl,
      projectId: ctx().projectId,
      fetch: (input, init) => {
        fetches += 1;
        return fetch(input, init);
      },
    });
    const before = await signUp('jwt-before@example.com');
    const claims = await verifier.verify(before.session.jwt);
    expect(claims).toMatchObject({
      iss: `${baseUrl}/v1/projects/${ctx().projectId}`,
      aud: ctx().projectId,
      sub: before.user.id,
      sid: before.session.id.split('.')[0],
      email: 'jwt-before@example.com',
      amr: ['pwd'],
    });
    for (let index = 0; index < 20; index += 1) await verifier.verify(before.session.jwt);
    expect(fetches).toBe(1);

    const rotated = await fetch(`${baseUrl}/v1/project/signing-keys/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx().secretKey}` },
    });
    expect(rotated.status).toBe(200);
    const after = await signUp('jwt-after@example.com');
    expect(await verifier.verify(after.session.jwt)).toMatchObject({ sub: after.user.id });
    // The token signed before the rotation still verifies.
    expect(await verifier.verify(before.session.jwt)).toMatchObject({ sub: before.user.id });
    // The new signing key was published as the next key before it signed: no fetch on the rotation.
    expect(fetches).toBe(1);
  });

  it('fetches the key set once more for an unknown kid (two rotations since it fetched), then verifies offline', async () => {
    let fetches = 0;
    // The verifier's clock runs 31 s ahead after the rotations: an unknown kid refetches at most every 30 s.
    let skewMs = 0;
    const verifier = createSessionJwtVerifier({
      baseUrl,
      projectId: ctx().projectId,
      nowMs: () => Date.now() + skewMs,
      fetch: (input, init) => {
        fetches += 1;
        return fetch(input, init);
      },
    });
    const first = await signUp('jwt-kid-first@example.com');
    await verifier.verify(first.session.jwt);
    expect(fetches).toBe(1);
    const rotate = () =>
      fetch(`${baseUrl}/v1/project/signing-keys/rotate`, { method: 'POST', headers: { authorization: `Bearer ${ctx().secretKey}` } });
    // The second rotation makes a key sign that was made after the verifier's fetch: its kid is unknown.
    expect((await rotate()).status).toBe(200);
    expect((await rotate()).status).toBe(200);
    const later = await signUp('jwt-kid-later@example.com');
    skewMs = 31_000;
    expect(await verifier.verify(later.session.jwt)).toMatchObject({ sub: later.user.id });
    expect(fetches).toBe(2);
    for (let index = 0; index < 20; index += 1) await verifier.verify(later.session.jwt);
    const another = await signUp('jwt-kid-another@example.com');
    expect(await verifier.verify(another.session.jwt)).toMatchObject({ sub: another.user.id });
    expect(fetches).toBe(2);
  });

  it('refuses the token for another project id', async () => {
    const session = await signUp('jwt-other@example.com');
    const verifier = createSessionJwtVerifier({ baseUrl, projectId: 'prj_someoneelse000000000000' });
    const error = await verifier.verify(session.session.jwt).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionJwtError);
    expect(['wrong_issuer', 'wrong_audience', 'unknown_key', 'jwks_unavailable']).toContain((error as SessionJwtError).code);
  });
});

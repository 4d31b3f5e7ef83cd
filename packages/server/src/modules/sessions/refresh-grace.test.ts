import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../lib/secret-box.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, testClock } from '../auth/auth.testing.js';
import { openSuccessor, sealSuccessor } from './refresh-grace.js';

function expectError(response: LightMyRequestResponse, status: number, code: string): void {
  expect({ status: response.statusCode, code: response.json<{ error: { code: string } }>().error.code }).toEqual({ status, code });
}

const nameOf = (token: string) => token.slice(0, token.indexOf('.'));
const GRACE_SECONDS = 10;

describe('sealed successors', () => {
  it('open only for the row they were sealed for, and never hold the tokens in clear', () => {
    const box = new SecretBox([{ id: 'test', key: randomBytes(32) }]);
    const row = { project_id: 'prj_a', id: 'svc_ses_a', refresh_token_hash: 'a'.repeat(64) };
    const secrets = { token: `svc_ses_b.${'s'.repeat(43)}`, refreshToken: `svc_rt_${'r'.repeat(43)}` };
    const sealed = sealSuccessor(box, row, secrets);
    expect(sealed).not.toContain('s'.repeat(20));
    expect(sealed).not.toContain(secrets.refreshToken);
    expect(openSuccessor(box, { ...row, successor_sealed: sealed })).toEqual(secrets);
    expect(openSuccessor(box, { ...row, id: 'svc_ses_c', successor_sealed: sealed })).toBeUndefined();
    expect(openSuccessor(box, { ...row, project_id: 'prj_b', successor_sealed: sealed })).toBeUndefined();
    expect(openSuccessor(new SecretBox([{ id: 'test', key: randomBytes(32) }]), { ...row, successor_sealed: sealed })).toBeUndefined();
    expect(openSuccessor(box, { ...row, successor_sealed: null })).toBeUndefined();
  });
});

// Regression: within a hard-coded 5 s, each presentation of a used refresh token created a NEW
// session. With REFRESH_REUSE_GRACE_SECONDS a retry gets the SAME session again, never another.
describeEachDialect('refresh grace window (REFRESH_REUSE_GRACE_SECONDS)', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env: { REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS) }, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject({ ...options, headers: { ...ctx().auth, ...options.headers } });
  const refresh = (refreshToken: string) => call({ method: 'POST', url: '/v1/sessions/refresh', payload: { refresh_token: refreshToken } });
  const me = (token: string) => ctx().service.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
  const sessionsOf = (userId: string) =>
    ctx().service.db.kysely.selectFrom('sessions').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
  const withoutJwt = (body: { session: object }) => ({ ...body, session: { ...body.session, jwt: undefined } });
  const cleanupJob = () => ctx().service.jobs.find((job) => job.name === 'session-successors-cleanup')!;

  it('answers a retry within the window with the same body (same tokens), makes no further session, then counts as reuse', async () => {
    const account = await signup(call, ctx().secretKey);
    clock.advance(1000);
    const first = await refresh(account.refreshToken);
    expect(first.statusCode).toBe(200);
    for (let retry = 0; retry < 3; retry += 1) {
      clock.advance(2000);
      const again = await refresh(account.refreshToken);
      expect(again.statusCode).toBe(200);
      // The same session and tokens; the JWT is signed at each answer (a statement of the moment).
      expect(withoutJwt(again.json())).toEqual(withoutJwt(first.json()));
      expect(typeof again.json().session.jwt).toBe('string');
    }
    expect(await sessionsOf(account.userId)).toHaveLength(2);
    const created = await eventsOf(ctx().service, ctx().projectId, 'session.created');
    expect(created.filter((event) => event['user_id'] === account.userId)).toHaveLength(2);
    expect((await me(first.json().session.id)).statusCode).toBe(200);

    // 10 s after the use (the window is [use, use + 10 s)): reuse, the chain revoked.
    clock.advance(4000);
    expectError(await refresh(account.refreshToken), 401, 'refresh_token_reused');
    expectError(await me(first.json().session.id), 401, 'session_revoked');
    expect((await sessionsOf(account.userId)).every((row) => row.successor_sealed === null)).toBe(true);
  });

  it('keeps the successor only sealed, and clears it when the window has passed (job) or a later token is used', async () => {
    const account = await signup(call, ctx().secretKey);
    const first = (await refresh(account.refreshToken)).json().session as { id: string; refresh_token: string };
    // By name: both sessions may have the same created_at (the test clock stood still).
    const usedRow = async () => (await sessionsOf(account.userId)).find((row) => row.id === nameOf(account.token));
    const used = await usedRow();
    expect(used?.successor_sealed).toMatch(/\S/);
    const stored = JSON.stringify(await ctx().service.db.kysely.selectFrom('sessions').selectAll().execute());
    expect(stored).not.toContain(first.id.split('.')[1]);
    expect(stored).not.toContain(first.refresh_token);

    // The job leaves it inside the window and clears it after.
    clock.advance(GRACE_SECONDS * 1000 - 1);
    await cleanupJob().run();
    expect((await usedRow())?.successor_sealed).not.toBeNull();
    clock.advance(1);
    await cleanupJob().run();
    expect((await usedRow())?.successor_sealed).toBeNull();

    // First later use: refreshing the successor clears what its predecessor kept, at once.
    const other = await signup(call, ctx().secretKey);
    const second = (await refresh(other.refreshToken)).json().session as { id: string; refresh_token: string };
    const third = await refresh(second.refresh_token);
    expect(third.statusCode).toBe(200);
    // By name, not by position: the test clock gives the three rows one created_at.
    const sealedByName = new Map((await sessionsOf(other.userId)).map((row) => [row.id, row.successor_sealed !== null]));
    expect([nameOf(other.token), nameOf(second.id), nameOf(third.json().session.id)].map((name) => sealedByName.get(name))).toEqual([
      false,
      true,
      false,
    ]);
    // The first token, inside its window still, is now two generations back: reuse.
    expectError(await refresh(other.refreshToken), 401, 'refresh_token_reused');
    expectError(await me(third.json().session.id), 401, 'session_revoked');
    expect((await sessionsOf(other.userId)).every((row) => row.successor_sealed === null)).toBe(true);
  });

  it('gives concurrent presentations of one unused token the same body, with exactly one successor', async () => {
    const account = await signup(call, ctx().secretKey);
    const results = await Promise.all(Array.from({ length: 4 }, () => refresh(account.refreshToken)));
    expect(results.map((response) => response.statusCode)).toEqual([200, 200, 200, 200]);
    const bodies = results.map((response) => response.json<{ session: { id: string } }>());
    for (const body of bodies) expect(withoutJwt(body)).toEqual(withoutJwt(bodies[0]!));
    const rows = await sessionsOf(account.userId);
    expect(rows.map((row) => row.id).sort()).toEqual([nameOf(account.token), nameOf(bodies[0]!.session.id)].sort());
    expect((await me(bodies[0]!.session.id)).statusCode).toBe(200);
  });

  it('does not answer a retry once the successor was revoked: that is reuse', async () => {
    const account = await signup(call, ctx().secretKey);
    const first = (await refresh(account.refreshToken)).json().session as { id: string };
    expect((await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(first.id) })).statusCode).toBe(204);
    expectError(await refresh(account.refreshToken), 401, 'refresh_token_reused');
  });
});

import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { tokenIn, useTestSmtp } from '../../test/smtp.js';
import { bearer, eventsOf, runEmailJob, signup, testClock, uniqueEmail } from '../auth/auth.testing.js';
import { EMAIL_CODE_RESEND_INTERVAL_MS, EMAIL_CODE_TTL_MS } from './email-codes.service.js';
import { codeAt, enrolTotp } from './mfa.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describeEachDialect('sign-in by emailed code', (dialect) => {
  const env: Record<string, string> = { PUBLIC_URL: 'https://auth.example.com', SMTP_FROM: 'Service <no-reply@example.com>' };
  const smtp = useTestSmtp(env);
  const clock = testClock();
  const ctx = useTestService(dialect, { env, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object, headers: Record<string, string> = ctx().auth) =>
    call({ method: 'POST', url, headers, payload });
  const codesTo = (address: string) =>
    smtp()
      .received.filter((email) => email.to.includes(address) && email.text.includes('Your sign-in code'))
      .map((email) => {
        const match = /^(\d{6})\r?$/m.exec(email.text);
        if (match?.[1] === undefined) throw new Error(`no code in the email:\n${email.text}`);
        return match[1];
      });
  // Asking is limited per end-user address too (20 at once): each request here comes from an address of its own.
  let requests = 0;
  const ask = (payload: object) => {
    requests += 1;
    return post('/v1/auth/email-code', payload, { ...ctx().auth, 'x-end-user-ip': `10.1.${Math.floor(requests / 250)}.${requests % 250}` });
  };
  /** Asks a code for the address and answers the one the email carried. */
  const askCode = async (email: string, createUser = false) => {
    expect((await ask(createUser ? { email, create_user: true } : { email })).statusCode).toBe(202);
    await runEmailJob(ctx().service);
    const code = codesTo(email).at(-1);
    if (code === undefined) throw new Error(`no email reached ${email}`);
    return code;
  };
  const wrongCode = (code: string) => (code === '000000' ? '111111' : '000000');

  it('sends a 6-digit code to a user; the code signs in once, answering shape A', async () => {
    const user = await signup(call, ctx().secretKey);
    const code = await askCode(user.email);
    const response = await post('/v1/auth/email-code/verify', { email: user.email, code });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ user: { id: string; email_verified: boolean }; session: { id: string } }>();
    expect(Object.keys(body).sort()).toEqual(['session', 'user']);
    expect(body.user).toMatchObject({ id: user.userId, email_verified: true });
    expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(body.session.id) })).statusCode).toBe(200);
    expectError(await post('/v1/auth/email-code/verify', { email: user.email, code }), 401, 'email_code_invalid', 'code');
  });

  it('the session of an emailed code says so in its JWT (amr email_code), verified against the JWKS', async () => {
    const user = await signup(call, ctx().secretKey);
    const code = await askCode(user.email);
    const body = (await post('/v1/auth/email-code/verify', { email: user.email, code })).json<{ session: { jwt: string } }>();
    const jwks = (await call({ method: 'GET', url: `/v1/projects/${ctx().projectId}/jwks.json` })).json<JSONWebKeySet>();
    const { payload } = await jwtVerify(body.session.jwt, createLocalJWKSet(jwks), {
      issuer: `https://auth.example.com/v1/projects/${ctx().projectId}`,
      audience: ctx().projectId,
      currentDate: clock.now(),
    });
    expect(payload).toMatchObject({ sub: user.userId, amr: ['email_code'], email_verified: true });
  });

  it('answers 202 alike for an unknown address and sends nothing; the same address with create_user makes a verified user', async () => {
    const email = uniqueEmail('code-new');
    const unknown = await ask({ email });
    expect(unknown.statusCode).toBe(202);
    expect(unknown.json()).toEqual({ accepted: true });
    await runEmailJob(ctx().service);
    expect(codesTo(email)).toEqual([]);
    expectError(await post('/v1/auth/email-code/verify', { email, code: '123456' }), 401, 'email_code_invalid');

    clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
    const code = await askCode(email, true);
    const created = await post('/v1/auth/email-code/verify', { email, code });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ user: { email, email_verified: true } });
    expect((await eventsOf(ctx().service, ctx().projectId, 'user.created')).map((data) => data['email'])).toContain(email);
  });

  it('a code dies after 5 wrong tries and after 10 minutes', async () => {
    const user = await signup(call, ctx().secretKey);
    const code = await askCode(user.email);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: wrongCode(code) }), 401, 'email_code_invalid');
    }
    expectError(await post('/v1/auth/email-code/verify', { email: user.email, code }), 401, 'email_code_invalid');

    clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
    const late = await askCode(user.email);
    clock.advance(EMAIL_CODE_TTL_MS);
    expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: late }), 401, 'email_code_invalid');
  });

  it('asking again never ends the codes already sent: up to 3 live, any of them signs in, and then the others end', async () => {
    const user = await signup(call, ctx().secretKey);
    const codes: string[] = [];
    for (let request = 0; request < 3; request += 1) {
      codes.push(await askCode(user.email));
      clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
    }
    expect(codesTo(user.email)).toHaveLength(3);
    // A fourth while three are live: 202, and nothing is sent.
    expect((await ask({ email: user.email })).statusCode).toBe(202);
    await runEmailJob(ctx().service);
    expect(codesTo(user.email)).toHaveLength(3);

    const [oldest, middle, newest] = codes;
    // The oldest still signs in; having signed in, the address's other codes are done with.
    expect((await post('/v1/auth/email-code/verify', { email: user.email, code: oldest! })).statusCode).toBe(200);
    for (const other of [middle!, newest!].filter((code) => code !== oldest)) {
      expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: other }), 401, 'email_code_invalid');
    }
  });

  it('a request within 60 s of the last sends nothing new and still answers 202; the code sent stays good', async () => {
    const user = await signup(call, ctx().secretKey);
    const code = await askCode(user.email);
    clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS - 1000);
    const again = await ask({ email: user.email });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual({ accepted: true });
    await runEmailJob(ctx().service);
    expect(codesTo(user.email)).toEqual([code]);
    clock.advance(1000);
    await askCode(user.email);
    expect(codesTo(user.email)).toHaveLength(2);
    expect((await post('/v1/auth/email-code/verify', { email: user.email, code })).statusCode).toBe(200);
  });

  it('five wrong tries end the codes they were made against; a code sent after some of them has five of its own', async () => {
    const user = await signup(call, ctx().secretKey);
    const first = await askCode(user.email);
    const wrong = (...codes: string[]) => ['000000', '111111', '222222'].find((candidate) => !codes.includes(candidate))!;
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: wrong(first) }), 401, 'email_code_invalid');
    }
    clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
    const second = await askCode(user.email);
    // Checked against both live codes, this fifth wrong try ends the first and is the second's first.
    expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: wrong(first, second) }), 401, 'email_code_invalid');
    // The first's own code is dead now; trying it is the second's second try.
    expectError(
      await post('/v1/auth/email-code/verify', { email: user.email, code: first === second ? wrong(first) : first }),
      401,
      'email_code_invalid',
    );
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: wrong(second) }), 401, 'email_code_invalid');
    }
    expect((await post('/v1/auth/email-code/verify', { email: user.email, code: second })).statusCode).toBe(200);
  });

  it('a user with an authenticator gets mfa_required from the code, and the session only with the second factor', async () => {
    const user = await signup(call, ctx().secretKey);
    // A verified address: the code signs this user in rather than claiming the account.
    await runEmailJob(ctx().service);
    const verification = smtp().received.find((email) => email.to.includes(user.email));
    if (verification === undefined) throw new Error('no verification email');
    expect((await post('/v1/auth/verify-email', { token: tokenIn(verification.text) })).statusCode).toBe(200);
    const totp = await enrolTotp(call, user.token, clock);
    const code = await askCode(user.email);
    const response = await post('/v1/auth/email-code/verify', { email: user.email, code });
    expect(response.statusCode).toBe(200);
    const challenge = response.json<{ mfa_required: boolean; mfa_token: string; methods: string[] }>();
    expect(challenge).toMatchObject({ mfa_required: true, methods: ['totp', 'recovery_code'] });
    const verified = await post('/v1/auth/mfa/verify', { mfa_token: challenge.mfa_token, code: codeAt(totp.secret, clock) });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toHaveProperty('session');
  });

  it('claims an account whose address was never verified: its password and authenticator go (identity linking rule 5)', async () => {
    const holder = await signup(call, ctx().secretKey);
    await enrolTotp(call, holder.token, clock);
    const code = await askCode(holder.email);
    const claimed = await post('/v1/auth/email-code/verify', { email: holder.email, code });
    expect(claimed.statusCode).toBe(200);
    expect(claimed.json()).toHaveProperty('session');
    expectError(await post('/v1/auth/login', { email: holder.email, password: holder.password }), 401, 'invalid_credentials');
    expect((await call({ method: 'GET', url: `/v1/users/${holder.userId}/mfa`, headers: ctx().auth })).json()).toMatchObject({
      totp: { status: 'none' },
    });
  });

  it('refuses a banned user, a malformed code and a malformed address', async () => {
    const user = await signup(call, ctx().secretKey);
    expectError(await post('/v1/auth/email-code/verify', { email: user.email, code: '12ab56' }), 401, 'email_code_invalid');
    expectError(await post('/v1/auth/email-code', { email: 'not-an-address' }), 400, 'parameter_invalid', 'email');
    expectError(await post('/v1/auth/email-code', { email: user.email, extra: true }), 400, 'parameter_unknown');

    const banned = await signup(call, ctx().secretKey);
    const bannedCode = await askCode(banned.email);
    expect((await post(`/v1/users/${banned.userId}/ban`, {})).statusCode).toBe(200);
    expectError(await post('/v1/auth/email-code/verify', { email: banned.email, code: bannedCode }), 403, 'user_banned');
  });

  describe('wrong codes count like log in', () => {
    const from = (ip: string) => ({ ...ctx().auth, 'x-end-user-ip': ip });
    const guess = (email: string, code: string, ip: string) => post('/v1/auth/email-code/verify', { email, code }, from(ip));

    it('10 per 15 minutes per (address, end-user address): then 429 even for the right code; the owner elsewhere signs in', async () => {
      const user = await signup(call, ctx().secretKey);
      // Two codes' five wrong tries each: the limit of this address from 203.0.113.9 is full.
      for (let round = 0; round < 2; round += 1) {
        clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
        const code = await askCode(user.email);
        for (let attempt = 0; attempt < 5; attempt += 1) {
          expectError(await guess(user.email, wrongCode(code), '203.0.113.9'), 401, 'email_code_invalid');
        }
      }
      clock.advance(EMAIL_CODE_RESEND_INTERVAL_MS);
      const code = await askCode(user.email);
      const limited = await guess(user.email, code, '203.0.113.9');
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // The owner, elsewhere, is below the limit across end-user addresses (100): not locked out.
      expect((await guess(user.email, code, '198.51.100.7')).statusCode).toBe(200);
    });

    it('100 per 15 minutes per address from all end-user addresses together: then 429 from a new address too', async () => {
      const user = await signup(call, ctx().secretKey);
      for (let address = 1; address <= 10; address += 1) {
        for (let attempt = 0; attempt < 10; attempt += 1) {
          expectError(await guess(user.email, '000000', `192.0.2.${address}`), 401, 'email_code_invalid');
        }
      }
      const code = await askCode(user.email);
      expectError(await guess(user.email, code, '198.51.100.80'), 429, 'rate_limited');
      // The window ends: the same code (still live, untried) signs in.
      clock.advance(9 * 60 * 1000);
      expectError(await guess(user.email, code, '198.51.100.80'), 429, 'rate_limited');
      clock.advance(6 * 60 * 1000);
      expect((await guess(user.email, code, '198.51.100.80')).statusCode).not.toBe(429);
    });
  });

  it('requests sent at once for one address pass the limits together never: one code is sent', async () => {
    const user = await signup(call, ctx().secretKey);
    const answers = await Promise.all(Array.from({ length: 5 }, () => ask({ email: user.email })));
    expect(answers.map((answer) => answer.statusCode)).toEqual([202, 202, 202, 202, 202]);
    await runEmailJob(ctx().service);
    expect(codesTo(user.email)).toHaveLength(1);
  });

  describe('audit', () => {
    it('records the request and the sign-in, without the code', async () => {
      const user = await signup(call, ctx().secretKey);
      const code = await askCode(user.email);
      await post('/v1/auth/email-code/verify', { email: user.email, code });
      const entries = (
        await call({ method: 'GET', url: `/v1/audit-logs?resource_id=${user.userId}&limit=100`, headers: ctx().auth })
      ).json<{ data: Array<{ action: string; changes: Record<string, unknown> }> }>().data;
      expect(entries.map((entry) => entry.action)).toEqual(expect.arrayContaining(['user.email_code_send', 'user.email_code_login']));
      expect(JSON.stringify(entries)).not.toContain(code);
    });
  });
});

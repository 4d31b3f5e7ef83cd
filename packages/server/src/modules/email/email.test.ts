import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { tokenIn, useTestSmtp } from '../../test/smtp.js';
import { bearer, eventsOf, runEmailJob, signup, strongPassword, testClock, uniqueEmail } from '../auth/auth.testing.js';
import { EMAIL_RETRY_DELAYS_SECONDS } from './email.job.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

const HOUR_MS = 60 * 60 * 1000;

describeEachDialect('email through SMTP: verification and password reset', (dialect) => {
  const env: Record<string, string> = {
    PUBLIC_URL: 'https://auth.example.com',
    PASSWORD_RESET_URL: 'https://app.example.com/reset?from=email',
  };
  const smtp = useTestSmtp(env);
  const clock = testClock();
  const ctx = useTestService(dialect, { env, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object, headers: Record<string, string> = ctx().auth) =>
    call({ method: 'POST', url, headers, payload });
  const emailsTo = (address: string) => smtp().received.filter((email) => email.to.includes(address));

  describe('verification', () => {
    it('sign-up queues the email in its transaction; the job sends it after, with a single-use link', async () => {
      const account = await signup(call, ctx().secretKey, { name: 'Verity' });
      expect(emailsTo(account.email)).toHaveLength(0);
      await runEmailJob(ctx().service);
      const [email] = emailsTo(account.email);
      expect(email).toBeDefined();
      expect(email!.text).toContain('Subject: Verify your email for Test project');
      expect(email!.text).toContain('Hello Verity,');
      expect(email!.text).toContain('https://auth.example.com/v1/auth/verify-email?token=');
      const row = await ctx()
        .service.db.kysely.selectFrom('email_outbox')
        .selectAll()
        .where('recipient', '=', account.email)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'sent', attempts: 1, sent_at: clock.now().toISOString() });
      // Running the job again sends nothing twice.
      await runEmailJob(ctx().service);
      expect(emailsTo(account.email)).toHaveLength(1);

      const token = tokenIn(email!.text);
      const verified = await post('/v1/auth/verify-email', { token });
      expect(verified.statusCode).toBe(200);
      expect(verified.json()).toMatchObject({ id: account.userId, email_verified: true });
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.email_verified')).toContainEqual({
        user_id: account.userId,
        email: account.email,
      });
      expectError(await post('/v1/auth/verify-email', { token }), 400, 'token_invalid', 'token');
      expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) })).json().email_verified).toBe(true);
    });

    it('the link in the email opens a small HTML page that verifies; a second visit says the link was used', async () => {
      const account = await signup(call, ctx().secretKey);
      await runEmailJob(ctx().service);
      const link = new URL(
        /https:\/\/auth\.example\.com\/v1\/auth\/verify-email\?token=[A-Za-z0-9_-]{43}/.exec(emailsTo(account.email)[0]!.text)![0],
      );
      const page = await call({ method: 'GET', url: `${link.pathname}${link.search}` });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain('Email verified');
      expect((await call({ method: 'GET', url: `/v1/users/${account.userId}`, headers: ctx().auth })).json().email_verified).toBe(true);
      const again = await call({ method: 'GET', url: `${link.pathname}${link.search}` });
      expect(again.statusCode).toBe(400);
      expect(again.body).toContain('not valid or was already used');
      const bogus = await call({ method: 'GET', url: '/v1/auth/verify-email?token=%3Cscript%3E' });
      expect(bogus.statusCode).toBe(400);
      expect(bogus.body).not.toContain('<script>');
      expectError(await call({ method: 'GET', url: '/v1/auth/verify-email' }), 400, 'parameter_missing', 'token');
    });

    it('a verification token expires after 24 hours (400 token_expired) and belongs to its project', async () => {
      const account = await signup(call, ctx().secretKey);
      await runEmailJob(ctx().service);
      const token = tokenIn(emailsTo(account.email)[0]!.text);
      const { secretKey: otherKey } = await ctx().service.projects.createProject({ name: 'Other' });
      expectError(await post('/v1/auth/verify-email', { token }, { authorization: `Bearer ${otherKey}` }), 400, 'token_invalid');
      clock.advance(24 * HOUR_MS);
      expectError(await post('/v1/auth/verify-email', { token }), 400, 'token_expired', 'token');
      expectError(await post('/v1/auth/verify-email', { token: 'x'.repeat(43) }), 400, 'token_invalid');
    });

    it('POST /v1/auth/verify-email/send resends (202), is rate limited per user (429), and sends nothing to a verified address', async () => {
      const account = await signup(call, ctx().secretKey);
      await runEmailJob(ctx().service);
      const send = () => post('/v1/auth/verify-email/send', { user_id: account.userId });
      const first = await send();
      expect(first.statusCode).toBe(202);
      expect(first.json()).toEqual({ accepted: true });
      expect((await send()).statusCode).toBe(202);
      const limited = await send();
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      await runEmailJob(ctx().service);
      const emails = emailsTo(account.email);
      expect(emails).toHaveLength(3);
      // Every link works until one is used.
      expect((await post('/v1/auth/verify-email', { token: tokenIn(emails[2]!.text) })).statusCode).toBe(200);
      expectError(await post('/v1/auth/verify-email', { token: tokenIn(emails[0]!.text) }), 400, 'token_invalid');
      expectError(await post('/v1/auth/verify-email/send', { user_id: 'usr_0000000000000000000000' }), 404, 'resource_missing');

      // A verified address gets no more verification emails.
      const verified = await signup(call, ctx().secretKey);
      await runEmailJob(ctx().service);
      expect((await post('/v1/auth/verify-email', { token: tokenIn(emailsTo(verified.email)[0]!.text) })).statusCode).toBe(200);
      expect((await post('/v1/auth/verify-email/send', { user_id: verified.userId })).statusCode).toBe(202);
      await runEmailJob(ctx().service);
      expect(emailsTo(verified.email)).toHaveLength(1);
    });
  });

  describe('password reset', () => {
    it('forgot answers 202 whether or not the account exists, and emails only an existing one', async () => {
      const account = await signup(call, ctx().secretKey);
      const unknown = uniqueEmail('ghost');
      const known = await post('/v1/auth/password/forgot', { email: account.email.toUpperCase() });
      const ghost = await post('/v1/auth/password/forgot', { email: unknown });
      expect([known.statusCode, ghost.statusCode]).toEqual([202, 202]);
      expect(known.body).toBe(ghost.body);
      await runEmailJob(ctx().service);
      expect(emailsTo(unknown)).toHaveLength(0);
      const reset = emailsTo(account.email).find((email) => email.text.includes('Subject: Reset your password'));
      expect(reset).toBeDefined();
      expect(reset!.text).toContain('https://app.example.com/reset?from=email&token=');
      expectError(await post('/v1/auth/password/forgot', { email: 'not an email' }), 400, 'parameter_invalid', 'email');
    });

    it('reset sets the password, revokes every session (reason password_reset), works once, and verifies the address', async () => {
      const account = await signup(call, ctx().secretKey);
      await post('/v1/auth/password/forgot', { email: account.email });
      await runEmailJob(ctx().service);
      const token = tokenIn(emailsTo(account.email).find((email) => email.text.includes('Reset your password'))!.text);
      const newPassword = strongPassword('reset');
      expectError(await post('/v1/auth/password/reset', { token, password: 'baseball' }), 422, 'password_too_weak', 'password');
      const response = await post('/v1/auth/password/reset', { token, password: newPassword });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: account.userId, email_verified: true });
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) }), 401, 'session_revoked');
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).toContainEqual({
        session_id: account.token.split('.')[0],
        user_id: account.userId,
        reason: 'password_reset',
      });
      expectError(await post('/v1/auth/password/reset', { token, password: strongPassword() }), 400, 'token_invalid', 'token');
      expectError(await post('/v1/auth/login', { email: account.email, password: account.password }), 401, 'invalid_credentials');
      expect((await post('/v1/auth/login', { email: account.email, password: newPassword })).statusCode).toBe(200);
    });

    it('a reset token expires after 1 hour; using one makes the other reset links dead', async () => {
      const account = await signup(call, ctx().secretKey);
      await post('/v1/auth/password/forgot', { email: account.email });
      await post('/v1/auth/password/forgot', { email: account.email });
      await runEmailJob(ctx().service);
      const tokens = emailsTo(account.email)
        .filter((email) => email.text.includes('Reset your password'))
        .map((email) => tokenIn(email.text));
      expect(tokens).toHaveLength(2);
      expect((await post('/v1/auth/password/reset', { token: tokens[0]!, password: strongPassword() })).statusCode).toBe(200);
      expectError(await post('/v1/auth/password/reset', { token: tokens[1]!, password: strongPassword() }), 400, 'token_invalid');

      await post('/v1/auth/password/forgot', { email: account.email });
      await runEmailJob(ctx().service);
      const late = tokenIn(
        emailsTo(account.email)
          .filter((email) => email.text.includes('Reset your password'))
          .at(-1)!.text,
      );
      clock.advance(HOUR_MS);
      expectError(await post('/v1/auth/password/reset', { token: late, password: strongPassword() }), 400, 'token_expired', 'token');
    });

    it('forgot is limited per address without telling: past the limit it still answers 202 and sends nothing', async () => {
      const account = await signup(call, ctx().secretKey);
      for (let request = 0; request < 5; request += 1)
        expect((await post('/v1/auth/password/forgot', { email: account.email })).statusCode).toBe(202);
      await runEmailJob(ctx().service);
      expect(emailsTo(account.email).filter((email) => email.text.includes('Reset your password'))).toHaveLength(3);
    });
  });

  describe('delivery', () => {
    it('a failing SMTP server never fails the sign-up nor loses the email: it is retried later', async () => {
      smtp().failNext = 2;
      const account = await signup(call, ctx().secretKey);
      await runEmailJob(ctx().service);
      const row = () =>
        ctx().service.db.kysely.selectFrom('email_outbox').selectAll().where('recipient', '=', account.email).executeTakeFirstOrThrow();
      expect(await row()).toMatchObject({ status: 'pending', attempts: 1 });
      expect((await row()).last_error).toContain('451');
      // Not due yet: nothing happens.
      await runEmailJob(ctx().service);
      expect((await row()).attempts).toBe(1);
      clock.advance(EMAIL_RETRY_DELAYS_SECONDS[0]! * 1000);
      await runEmailJob(ctx().service);
      expect(await row()).toMatchObject({ status: 'pending', attempts: 2 });
      clock.advance(EMAIL_RETRY_DELAYS_SECONDS[1]! * 1000);
      await runEmailJob(ctx().service);
      expect(await row()).toMatchObject({ status: 'sent', attempts: 3 });
      expect(emailsTo(account.email)).toHaveLength(1);
      // Each attempt made its own token; the one that arrived works.
      expect((await post('/v1/auth/verify-email', { token: tokenIn(emailsTo(account.email)[0]!.text) })).statusCode).toBe(200);
    });

    it('gives up after the last attempt and marks the email failed', async () => {
      smtp().failNext = 100;
      const account = await signup(call, ctx().secretKey);
      for (let attempt = 0; attempt <= EMAIL_RETRY_DELAYS_SECONDS.length; attempt += 1) {
        await runEmailJob(ctx().service);
        clock.advance((EMAIL_RETRY_DELAYS_SECONDS[attempt] ?? 0) * 1000);
      }
      const row = await ctx()
        .service.db.kysely.selectFrom('email_outbox')
        .selectAll()
        .where('recipient', '=', account.email)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'failed', attempts: EMAIL_RETRY_DELAYS_SECONDS.length + 1 });
    });

    it('cancels an email whose user was deleted before it went out', async () => {
      const account = await signup(call, ctx().secretKey);
      await call({ method: 'DELETE', url: `/v1/users/${account.userId}`, headers: ctx().auth });
      await runEmailJob(ctx().service);
      expect(emailsTo(account.email)).toHaveLength(0);
      const row = await ctx()
        .service.db.kysely.selectFrom('email_outbox')
        .selectAll()
        .where('recipient', '=', account.email)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('cancelled');
    });

    it('a sign-up that fails sends nothing: the email exists only if the change committed', async () => {
      const account = await signup(call, ctx().secretKey);
      await post('/v1/auth/signup', { email: account.email, password: strongPassword() });
      await runEmailJob(ctx().service);
      expect(emailsTo(account.email)).toHaveLength(1);
    });
  });
});

describeEachDialect('email without SMTP_URL', (dialect) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const ctx = useTestService(dialect, { env: { DATA_DIR: dataDir }, serviceOptions: { logger } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('writes each email as a file in DATA_DIR/outbox/ and logs it, without the token in the log', async () => {
    const account = await signup(call, ctx().secretKey);
    await runEmailJob(ctx().service);
    const outbox = join(dataDir, 'outbox');
    const files = readdirSync(outbox);
    expect(files).toHaveLength(1);
    const content = readFileSync(join(outbox, files[0]!), 'utf8');
    expect(content).toContain(`To: ${account.email}`);
    expect(content).toContain('Subject: Verify your email');
    const token = tokenIn(content);
    const logLine = lines.find((line) => line.includes('email written to the outbox directory'));
    expect(logLine).toBeDefined();
    expect(logLine).toContain(files[0]);
    expect(lines.join('\n')).not.toContain(token);
    expect((await call({ method: 'POST', url: '/v1/auth/verify-email', headers: ctx().auth, payload: { token } })).statusCode).toBe(200);
  });
});

describeEachDialect('no secret in logs or stored rows', (dialect) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
  const lines: string[] = [];
  // The most verbose level and no redaction: nothing may reach the log in the first place.
  const logger = pino({ level: 'trace' }, { write: (line: string) => lines.push(line) });
  const ctx = useTestService(dialect, { env: { DATA_DIR: dataDir }, serviceOptions: { logger } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps passwords, session tokens, refresh tokens and email tokens out of every table and every log line', async () => {
    const secrets: string[] = [ctx().secretKey];
    const post = (url: string, payload: object, headers: Record<string, string> = ctx().auth) =>
      call({ method: 'POST', url, headers, payload });
    const account = await signup(call, ctx().secretKey);
    secrets.push(account.password, account.token, account.token.split('.')[1]!, account.refreshToken);
    const login = (await post('/v1/auth/login', { email: account.email, password: account.password })).json().session;
    secrets.push(login.id, login.refresh_token);
    const refreshed = (
      await post('/v1/sessions/refresh', { refresh_token: login.refresh_token }, { ...ctx().auth, 'idempotency-key': 'refresh-1' })
    ).json().session;
    secrets.push(refreshed.id, refreshed.refresh_token);
    await post('/v1/sessions/validate', { session_id: refreshed.id }, { ...ctx().auth, 'idempotency-key': 'validate-1' });
    await post('/v1/auth/login', { email: account.email, password: 'wrong-password-guess' });
    await post('/v1/auth/password/forgot', { email: account.email });
    await runEmailJob(ctx().service);
    const outbox = join(dataDir, 'outbox');
    const emails = readdirSync(outbox).map((file) => readFileSync(join(outbox, file), 'utf8'));
    expect(emails).toHaveLength(2);
    secrets.push(...emails.map(tokenIn));
    const resetToken = tokenIn(emails.find((email) => email.includes('Subject: Reset your password'))!);
    const newPassword = strongPassword('after-reset');
    secrets.push(newPassword);
    expect(
      (await post('/v1/auth/password/reset', { token: resetToken, password: newPassword }, { ...ctx().auth, 'idempotency-key': 'reset-1' }))
        .statusCode,
    ).toBe(200);
    const fresh = (await post('/v1/auth/login', { email: account.email, password: newPassword })).json().session;
    secrets.push(fresh.id);
    const changed = strongPassword('changed');
    secrets.push(changed);
    await call({
      method: 'POST',
      url: '/v1/auth/password/change',
      headers: bearer(fresh.id),
      payload: { current_password: newPassword, new_password: changed },
    });
    await call({
      method: 'POST',
      url: '/v1/auth/password/change',
      headers: bearer(fresh.id),
      payload: { current_password: 'wrong-guess-123', new_password: changed },
    });

    const db = ctx().service.db.kysely;
    const tables = [
      'projects',
      'api_keys',
      'idempotency_keys',
      'users',
      'roles',
      'sessions',
      'email_tokens',
      'email_outbox',
      'events',
    ] as const;
    let stored = '';
    for (const table of tables) stored += JSON.stringify(await db.selectFrom(table).selectAll().execute());
    expect(stored.length).toBeGreaterThan(1000);
    const logged = lines.join('\n');
    expect(lines.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });
});

describeEachDialect('the verification link with EMAIL_VERIFIED_REDIRECT_URL', (dialect) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-redirect-'));
  const ctx = useTestService(dialect, { env: { DATA_DIR: dataDir, EMAIL_VERIFIED_REDIRECT_URL: 'https://app.example.com/welcome' } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("verifies, then sends the browser to the application's page (303); a used link shows the error page", async () => {
    await signup(call, ctx().secretKey);
    await runEmailJob(ctx().service);
    const outbox = join(dataDir, 'outbox');
    const token = tokenIn(readFileSync(join(outbox, readdirSync(outbox)[0]!), 'utf8'));
    const response = await call({ method: 'GET', url: `/v1/auth/verify-email?token=${token}` });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('https://app.example.com/welcome');
    const again = await call({ method: 'GET', url: `/v1/auth/verify-email?token=${token}` });
    expect(again.statusCode).toBe(400);
    expect(again.headers['content-type']).toContain('text/html');
  });
});

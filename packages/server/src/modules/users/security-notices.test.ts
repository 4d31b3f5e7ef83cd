import type { InjectOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { type CapturedEmail, tokenIn, useTestSmtp } from '../../test/smtp.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { bearer, runEmailJob, signup, strongPassword, testClock } from '../auth/auth.testing.js';
import { codeAt } from '../mfa/mfa.testing.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey } from '../passkeys/passkeys.testing.js';

/** The notices a user gets when a way into the account is added or the password changes (docs/security.md). */
describeEachDialect('security notices', (dialect) => {
  const env: Record<string, string> = { PUBLIC_URL: 'https://auth.example.com', SMTP_FROM: 'Service <no-reply@example.com>' };
  const smtp = useTestSmtp(env);
  const clock = testClock(new Date('2026-11-27T09:41:17.250Z'));
  const ctx = useTestService(dialect, { env, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  beforeAll(async () => {
    await configureRelyingParty(passkeyClient(ctx().service, ctx().secretKey));
  });

  /** The notices the address received, after the outbox job has run. */
  async function noticesTo(address: string): Promise<CapturedEmail[]> {
    await runEmailJob(ctx().service);
    return smtp().received.filter((email) => email.to.includes(address) && email.text.includes('Security notice'));
  }

  /** Says what changed and when, and what to do if it was not the user. */
  function expectNotice(notice: CapturedEmail | undefined, what: string): void {
    expect(notice?.text).toContain(what);
    expect(notice?.text).toContain(`on ${clock.now().toISOString().slice(0, 10)} at ${clock.now().toISOString().slice(11, 16)} UTC`);
    expect(notice?.text).toContain('reset your password');
    expect(notice?.text).toContain('support');
  }

  it('adding a passkey sends one, naming no credential', async () => {
    const user = await signup(call, ctx().secretKey);
    expect(await noticesTo(user.email)).toEqual([]);
    const passkey = await registerPasskey(
      passkeyClient(ctx().service, ctx().secretKey),
      user.token,
      new SoftwareAuthenticator({ origin: ORIGIN }),
    );
    const notices = await noticesTo(user.email);
    expect(notices).toHaveLength(1);
    expectNotice(notices[0], 'A passkey was added to your Test project account');
    expect(notices[0]?.text).not.toContain(passkey.credentialId);
  });

  it('turning an authenticator on sends one, without its secret or recovery codes; a pending enrolment sends none', async () => {
    const user = await signup(call, ctx().secretKey);
    const enrolled = await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(user.token) });
    const { secret } = enrolled.json<{ secret: string }>();
    expect(await noticesTo(user.email)).toEqual([]);
    const confirmed = await call({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(user.token),
      payload: { code: codeAt(secret, clock) },
    });
    expect(confirmed.statusCode).toBe(200);
    const notices = await noticesTo(user.email);
    expect(notices).toHaveLength(1);
    expectNotice(notices[0], 'An authenticator app was turned on as a second factor');
    expect(notices[0]?.text).not.toContain(secret);
    for (const recoveryCode of confirmed.json<{ recovery_codes: string[] }>().recovery_codes) {
      expect(notices[0]?.text).not.toContain(recoveryCode);
    }
  });

  it('changing the password sends one, without the password; a refused change sends none', async () => {
    const user = await signup(call, ctx().secretKey);
    const change = (currentPassword: string, newPassword: string) =>
      call({
        method: 'POST',
        url: '/v1/auth/password/change',
        headers: bearer(user.token),
        payload: { current_password: currentPassword, new_password: newPassword },
      });
    expect((await change(`${user.password}x`, strongPassword('new'))).statusCode).toBe(401);
    expect(await noticesTo(user.email)).toEqual([]);
    const newPassword = strongPassword('new');
    expect((await change(user.password, newPassword)).statusCode).toBe(200);
    const notices = await noticesTo(user.email);
    expect(notices).toHaveLength(1);
    expectNotice(notices[0], 'The password was changed for your Test project account');
    expect(notices[0]?.text).not.toContain(newPassword);
    expect(notices[0]?.text).not.toContain(user.password);
  });

  it('resetting the password sends one, without the reset token', async () => {
    const user = await signup(call, ctx().secretKey);
    expect(
      (await call({ method: 'POST', url: '/v1/auth/password/forgot', headers: ctx().auth, payload: { email: user.email } })).statusCode,
    ).toBe(202);
    await runEmailJob(ctx().service);
    const resetEmail = smtp().received.find((email) => email.to.includes(user.email) && email.text.includes('reset the password'));
    if (resetEmail === undefined) throw new Error('no reset email');
    const token = tokenIn(resetEmail.text);
    const reset = await call({
      method: 'POST',
      url: '/v1/auth/password/reset',
      headers: ctx().auth,
      payload: { token, password: strongPassword('reset') },
    });
    expect(reset.statusCode).toBe(200);
    const notices = await noticesTo(user.email);
    expect(notices).toHaveLength(1);
    expectNotice(notices[0], 'The password was reset, with a link sent by email, for your Test project account');
    expect(notices[0]?.text).not.toContain(token);
  });

  describe('the outbox', () => {
    it('holds what changed and when, and nothing secret', async () => {
      const user = await signup(call, ctx().secretKey);
      const newPassword = strongPassword('outbox');
      await call({
        method: 'POST',
        url: '/v1/auth/password/change',
        headers: bearer(user.token),
        payload: { current_password: user.password, new_password: newPassword },
      });
      const rows = await ctx()
        .service.db.kysely.selectFrom('email_outbox')
        .select(['data', 'recipient'])
        .where('template', '=', 'security_notice')
        .where('recipient', '=', user.email)
        .execute();
      expect(rows.map((row) => JSON.parse(row.data) as unknown)).toEqual([
        { user_id: user.userId, change: 'password_changed', changed_at: clock.now().toISOString() },
      ]);
    });
  });
});

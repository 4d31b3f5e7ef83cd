import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MfaRequiredError } from '../src/index.js';
import { PASSWORD, uniqueEmail, useSdkService } from './harness.js';

/** RFC 6238 with SHA-1, 6 digits, 30 s: what an authenticator app shows, for the test. */
function totp(secret: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const character of secret) bits += alphabet.indexOf(character).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

describe('second factors through the SDK', () => {
  const ctx = useSdkService();

  it('enrols an authenticator, then log in throws MfaRequiredError and verifyMfa finishes it; the administrator resets it', async () => {
    const svc = ctx().client();
    const email = uniqueEmail();
    const { user, session } = await svc.auth.signUp({ email, password: PASSWORD, name: 'Ada' });
    const asUser = svc.withSession(session.id);
    const enrolment = await asUser.mfa.enrollTotp();
    expect(enrolment.status).toBe('pending');
    const activation = await asUser.mfa.confirmTotp({ code: totp(enrolment.secret) });
    expect(activation.recovery_codes).toHaveLength(10);
    expect(await asUser.mfa.status()).toMatchObject({ totp: { status: 'active' }, recovery_codes_left: 10 });

    const refused = await svc.auth.login({ email, password: PASSWORD }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MfaRequiredError);
    const challenge = refused as MfaRequiredError;
    expect(challenge.mfaToken).toMatch(/^svc_mfa_/);
    expect(challenge.methods).toEqual(['totp', 'recovery_code']);
    const signedIn = await svc.auth.verifyMfa({ mfa_token: challenge.mfaToken, recovery_code: activation.recovery_codes[0] ?? '' });
    expect(signedIn.user.id).toBe(user.id);
    const raw = await svc.operations.logIn({ body: { email, password: PASSWORD } });
    expect(raw).toMatchObject({ mfa_required: true });

    expect(await svc.users.getMfa(user.id)).toMatchObject({ recovery_codes_left: 9 });
    expect(await svc.users.resetMfa(user.id)).toMatchObject({ totp: { status: 'none' } });
    await expect(svc.auth.login({ email, password: PASSWORD })).resolves.toMatchObject({ user: { id: user.id } });
  });

  it('asks for an emailed code: 202 whatever the address', async () => {
    const svc = ctx().client();
    expect(await svc.auth.sendEmailCode({ email: uniqueEmail() })).toEqual({ accepted: true });
  });
});

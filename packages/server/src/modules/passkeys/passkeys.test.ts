import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { auditReader } from '../audit/audit.testing.js';
import { eventsOf, signup, testClock } from '../auth/auth.testing.js';
import { errorCode } from '../wallets/wallets.fixtures.js';
import {
  configureRelyingParty,
  ORIGIN,
  type PasskeyClient,
  passkeyClient,
  RELYING_PARTY,
  registerPasskey,
  registrationOptions,
} from './passkeys.testing.js';

/** The project's relying party, registration, listing and removal of passkeys (docs/api.md, "Passkeys"). */
describeEachDialect('passkeys: relying party and registration', (dialect) => {
  const clock = testClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: PasskeyClient;
  let authenticator: SoftwareAuthenticator;

  beforeAll(() => {
    client = passkeyClient(current().service, current().secretKey);
    authenticator = new SoftwareAuthenticator({ origin: ORIGIN });
  });

  const newUser = () => signup((options) => current().service.app.inject(options), current().secretKey);

  describe('the relying party (PATCH /v1/project)', () => {
    it('refuses every passkey route with webauthn_not_configured while the project has none', async () => {
      const user = await newUser();
      expect(errorCode(await client.call('POST', '/v1/users/me/passkeys/options', {}, user.token))).toBe('webauthn_not_configured');
      expect(errorCode(await client.call('POST', '/v1/auth/passkey/options', {}))).toBe('webauthn_not_configured');
      const response = await client.call('POST', '/v1/auth/passkey/options', {});
      expect(response.statusCode).toBe(400);
    });

    it.each([
      ['rp_id with a scheme', { ...RELYING_PARTY, rp_id: 'https://example.com' }, 'webauthn.rp_id'],
      ['rp_id in upper case', { ...RELYING_PARTY, rp_id: 'Example.com' }, 'webauthn.rp_id'],
      ['rp_id an IP address', { ...RELYING_PARTY, rp_id: '127.0.0.1', origins: ['https://127.0.0.1'] }, 'webauthn.rp_id'],
      ['an origin with a path', { ...RELYING_PARTY, origins: ['https://app.example.com/login'] }, 'webauthn.origins[0]'],
      ['an origin with a trailing slash', { ...RELYING_PARTY, origins: ['https://app.example.com/'] }, 'webauthn.origins[0]'],
      ['an http origin off localhost', { ...RELYING_PARTY, origins: ['http://app.example.com'] }, 'webauthn.origins[0]'],
      ['an origin off rp_id', { ...RELYING_PARTY, origins: [ORIGIN, 'https://evil-example.com'] }, 'webauthn.origins[1]'],
      ['a repeated origin', { ...RELYING_PARTY, origins: [ORIGIN, ORIGIN] }, 'webauthn.origins[1]'],
      ['no origin', { ...RELYING_PARTY, origins: [] }, 'webauthn.origins'],
      ['a blank rp_name', { ...RELYING_PARTY, rp_name: '   ' }, 'webauthn.rp_name'],
    ])('refuses %s with 400 naming the field, and changes nothing', async (_label, webauthn, param) => {
      const response = await client.call('PATCH', '/v1/project', { webauthn });
      expect(response.statusCode).toBe(400);
      expect(response.json<{ error: { code: string; param: string } }>().error).toMatchObject({ code: 'parameter_invalid', param });
      expect((await client.call('GET', '/v1/project')).json<{ webauthn: unknown }>().webauthn).toBeNull();
    });

    it('refuses an unknown field inside webauthn', async () => {
      const response = await client.call('PATCH', '/v1/project', { webauthn: { ...RELYING_PARTY, extra: 1 } });
      expect(response.statusCode).toBe(400);
    });

    it('sets it, shows it on GET /v1/project, records it in the audit log, and accepts http://localhost', async () => {
      const local = { rp_id: 'localhost', rp_name: 'Dev', origins: ['http://localhost:5173'] };
      const first = await client.call('PATCH', '/v1/project', { webauthn: local });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toMatchObject({ object: 'project', webauthn: local });
      const audit = await auditReader(current().service, current().secretKey).of(first);
      expect(audit).toEqual([
        expect.objectContaining({ action: 'project.update', resource: { type: 'project', id: current().projectId } }),
      ]);
      expect((await client.call('PATCH', '/v1/project', { webauthn: null })).json<{ webauthn: unknown }>().webauthn).toBeNull();
      await configureRelyingParty(client);
      expect((await client.call('GET', '/v1/project')).json()).toMatchObject({ webauthn: RELYING_PARTY, name: 'Test project' });
    });
  });

  describe('registration', () => {
    it('gives creation options that require user verification and a discoverable credential, with attestation none', async () => {
      const user = await newUser();
      const options = await registrationOptions(client, user.token);
      expect(options).toMatchObject({
        rp: { id: 'example.com', name: 'Example' },
        user: { id: Buffer.from(user.userId).toString('base64url'), name: user.email },
        attestation: 'none',
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        timeout: 300_000,
      });
      expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    });

    it('registers a passkey: 201 with its id, name and time, the event, the audit entry; later options exclude it', async () => {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token));
      const response = await client.call('POST', '/v1/users/me/passkeys', { response: credential, name: '  Laptop  ' }, user.token);
      expect(response.statusCode, response.body).toBe(201);
      const passkey = response.json<{ id: string; created_at: string }>();
      expect(passkey).toMatchObject({
        object: 'passkey',
        name: 'Laptop',
        user_id: user.userId,
        transports: ['internal'],
        last_used_at: null,
      });
      expect(passkey.id).toMatch(/^pk_[0-9A-Za-z]{22}$/);
      expect(passkey.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const events = await eventsOf(current().service, current().projectId, 'user.passkey.added');
      expect(events).toContainEqual({ user_id: user.userId, passkey_id: passkey.id, name: 'Laptop' });
      const audit = await auditReader(current().service, current().secretKey).of(response);
      expect(audit).toEqual([
        expect.objectContaining({ action: 'passkey.create', resource: { type: 'passkey', id: passkey.id }, outcome: 'success' }),
      ]);
      const next = await registrationOptions(client, user.token);
      expect((next as { excludeCredentials?: { id: string }[] }).excludeCredentials?.map((item) => item.id)).toEqual([credential.id]);
    });

    async function refusal(bend: Parameters<SoftwareAuthenticator['register']>[1], code: string) {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token), bend);
      const response = await client.call('POST', '/v1/users/me/passkeys', { response: credential }, user.token);
      expect(response.json<{ error: { code: string } }>().error.code, response.body).toBe(code);
      expect((await client.call('GET', '/v1/users/me/passkeys', undefined, user.token)).json<{ data: unknown[] }>().data).toEqual([]);
      return response;
    }

    it('refuses a response from an origin not in the relying party', async () => {
      const response = await refusal({ origin: 'https://evil.example.net' }, 'passkey_verification_failed');
      expect(response.statusCode).toBe(400);
      expect(response.json<{ error: { message: string } }>().error.message).toContain('evil.example.net');
    });

    it('refuses a credential made for another rp_id', async () => {
      await refusal({ rpId: 'evil.example.net' }, 'passkey_verification_failed');
    });

    it('refuses a credential made without user verification', async () => {
      await refusal({ userVerified: false }, 'passkey_verification_failed');
    });

    it('refuses a challenge the service never issued', async () => {
      await refusal({ challenge: Buffer.alloc(32, 7).toString('base64url') }, 'passkey_challenge_invalid');
    });

    it('refuses a replayed response: the challenge is single use', async () => {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token));
      expect((await client.call('POST', '/v1/users/me/passkeys', { response: credential }, user.token)).statusCode).toBe(201);
      const replay = await client.call('POST', '/v1/users/me/passkeys', { response: credential }, user.token);
      expect(errorCode(replay)).toBe('passkey_challenge_invalid');
    });

    it('refuses an expired challenge (5 minutes)', async () => {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token));
      clock.advance(5 * 60 * 1000 + 1);
      const response = await client.call('POST', '/v1/users/me/passkeys', { response: credential }, user.token);
      expect(errorCode(response)).toBe('passkey_challenge_expired');
    });

    it("refuses a challenge issued to another user's session", async () => {
      const alice = await newUser();
      const mallory = await newUser();
      const credential = authenticator.register(await registrationOptions(client, alice.token));
      expect(errorCode(await client.call('POST', '/v1/users/me/passkeys', { response: credential }, mallory.token))).toBe(
        'passkey_challenge_invalid',
      );
    });

    it('refuses a credential id registered already in the project with 409', async () => {
      const user = await newUser();
      const first = await registerPasskey(client, user.token, authenticator);
      const again = authenticator.register(await registrationOptions(client, user.token), { credentialId: first.credentialId });
      const response = await client.call('POST', '/v1/users/me/passkeys', { response: again }, user.token);
      expect(response.statusCode).toBe(409);
      expect(errorCode(response)).toBe('passkey_already_registered');
    });

    it('refuses a response whose id is not the credential the authenticator attested', async () => {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token));
      const forged = Buffer.alloc(16, 9).toString('base64url');
      const response = await client.call(
        'POST',
        '/v1/users/me/passkeys',
        { response: { ...credential, id: forged, rawId: forged } },
        user.token,
      );
      expect(errorCode(response)).toBe('passkey_verification_failed');
    });

    it('refuses malformed responses and names with 400, never 500', async () => {
      const user = await newUser();
      const credential = authenticator.register(await registrationOptions(client, user.token));
      const cases: object[] = [
        { response: { ...credential, response: { ...credential.response, clientDataJSON: 'bm90IGpzb24' } } },
        { response: { ...credential, response: { ...credential.response, attestationObject: 'AAAA' } } },
        { response: { ...credential, type: 'other' } },
        { response: credential, name: '' },
        { response: credential, extra: true },
      ];
      for (const payload of cases) {
        const response = await client.call('POST', '/v1/users/me/passkeys', payload, user.token);
        expect(response.statusCode, response.body).toBe(400);
      }
    });

    it('refuses a secret key on the session routes', async () => {
      expect(errorCode(await client.call('POST', '/v1/users/me/passkeys/options', {}))).toBe('session_token_required');
    });
  });

  describe('listing and removal', () => {
    it('lists the user’s passkeys newest first, and removes one with its event and audit entry', async () => {
      const user = await newUser();
      const older = await registerPasskey(client, user.token, authenticator, 'Phone');
      clock.advance(1000);
      const newer = await registerPasskey(client, user.token, authenticator, 'Laptop');
      const list = await client.call('GET', '/v1/users/me/passkeys?limit=1', undefined, user.token);
      expect(list.json()).toMatchObject({ object: 'list', data: [{ id: newer.id, name: 'Laptop' }], has_more: true });
      const next = await client.call('GET', `/v1/users/me/passkeys?starting_after=${newer.id}`, undefined, user.token);
      expect(next.json()).toMatchObject({ data: [{ id: older.id }], has_more: false });

      const removed = await client.call('DELETE', `/v1/users/me/passkeys/${older.id}`, undefined, user.token);
      expect(removed.json()).toEqual({ id: older.id, object: 'passkey', deleted: true });
      expect(await eventsOf(current().service, current().projectId, 'user.passkey.removed')).toContainEqual({
        user_id: user.userId,
        passkey_id: older.id,
        name: 'Phone',
      });
      const audit = await auditReader(current().service, current().secretKey).of(removed);
      expect(audit).toEqual([expect.objectContaining({ action: 'passkey.delete', outcome: 'success' })]);
      expect(errorCode(await client.call('DELETE', `/v1/users/me/passkeys/${older.id}`, undefined, user.token))).toBe('resource_missing');
    });

    it("answers 404 for another user's passkey and leaves it in place", async () => {
      const owner = await newUser();
      const other = await newUser();
      const passkey = await registerPasskey(client, owner.token, authenticator);
      expect(errorCode(await client.call('DELETE', `/v1/users/me/passkeys/${passkey.id}`, undefined, other.token))).toBe(
        'resource_missing',
      );
      expect((await client.call('GET', '/v1/users/me/passkeys', undefined, owner.token)).json<{ data: unknown[] }>().data).toHaveLength(1);
    });

    it('lets the project list and remove a user’s passkeys with its secret key, and no other project’s', async () => {
      const user = await newUser();
      const passkey = await registerPasskey(client, user.token, authenticator);
      const list = await client.call('GET', `/v1/users/${user.userId}/passkeys`);
      expect(list.json()).toMatchObject({ data: [{ id: passkey.id, user_id: user.userId }] });

      const other = await current().service.projects.createProject({ name: 'Other' });
      const outsider = passkeyClient(current().service, other.secretKey);
      expect(errorCode(await outsider.call('GET', `/v1/users/${user.userId}/passkeys`))).toBe('resource_missing');
      expect(errorCode(await outsider.call('DELETE', `/v1/users/${user.userId}/passkeys/${passkey.id}`))).toBe('resource_missing');

      const removed = await client.call('DELETE', `/v1/users/${user.userId}/passkeys/${passkey.id}`);
      expect(removed.statusCode).toBe(200);
      const audit = await auditReader(current().service, current().secretKey).of(removed);
      expect(audit).toEqual([
        expect.objectContaining({ action: 'passkey.delete', actor: expect.objectContaining({ type: 'secret_key' }) }),
      ]);
    });
  });
});

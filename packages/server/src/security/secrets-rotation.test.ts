import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createService, type Service } from '../main.js';
import type { DnsLookup } from '../lib/outbound-http.js';
import { SecretBox, sealedKeyId } from '../lib/secret-box.js';
import { createTestDatabase, describeEachDialect, type TestDatabase, testConfig } from '../test/database.js';
import {
  makeTestCertificate,
  type OidcProviderHandle,
  type ProviderLanding,
  signInAtProvider,
  startOidcProvider,
  type TestCertificate,
} from '../test/oauth-providers.js';
import { timeStep, totpCode } from '../modules/mfa/totp.js';
import { SEALED_COLUMNS } from './sealed-columns.js';
import { rotateSealedSecrets } from './secrets-rotation.js';

/**
 * `svc secrets rotate` (docs/adr/0015-secrets-at-rest.md): values sealed under key A, the keyring
 * changed to "B,A", the rotation run: every value of every sealed column names B, and a service with
 * a keyring of B alone still finishes sign-ins started under A, replays idempotent answers stored
 * under A, and reads its provider and connection secrets.
 */

const PUBLIC_URL = 'https://svc.rotation.test';
const APP = 'https://app.example.com/callback';
const OIDC_CALLBACK = `${PUBLIC_URL}/v1/auth/sso/oidc/callback`;
const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
const publicAddress: DnsLookup = () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]);

let certificate: TestCertificate;
let oidc: OidcProviderHandle;

beforeAll(async () => {
  certificate = makeTestCertificate();
  oidc = await startOidcProvider({
    certificate,
    clients: [
      { client_id: 'oauth-client', client_secret: 'oauth-client-secret', redirect_uris: [APP] },
      { client_id: 'sso-client', client_secret: 'sso-client-secret', redirect_uris: [OIDC_CALLBACK] },
    ],
  });
  oidc.accounts.set('olga', { email: 'olga@oauth.example', email_verified: true });
  oidc.accounts.set('sam', { email: 'sam@sso.example', email_verified: true });
});

afterAll(async () => {
  await oidc?.close();
  certificate?.remove();
});

/** A value in the format of before keyrings (`v1.<iv>.<tag>.<ciphertext>`), as the service then sealed it. */
function legacySeal(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

describeEachDialect('secrets rotation', (dialect) => {
  let database: TestDatabase;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-rotation-'));
  const services: Service[] = [];

  async function serviceWith(keys: string): Promise<Service> {
    const config = testConfig(database.url, {
      SECRETS_ENCRYPTION_KEYS: keys,
      OAUTH_ALLOW_PRIVATE: '1',
      PUBLIC_URL,
      DATA_DIR: dataDir,
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
    });
    const service = await createService(config, { oauth: { trustedCa: certificate.certPem }, webhooks: { lookup: publicAddress } });
    services.push(service);
    return service;
  }

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    for (const service of services) await service.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Every sealed value of the registry, with what opens it. */
  async function sealedValues(service: Service) {
    const values: { column: string; value: string; context: string }[] = [];
    for (const entry of SEALED_COLUMNS) {
      const where = entry.where === undefined ? sql`` : sql`and ${entry.where}`;
      const { rows } = await sql<Record<string, string>>`select * from ${sql.table(entry.table)}
        where ${sql.ref(entry.column)} is not null ${where}`.execute(service.db.kysely);
      for (const row of rows)
        values.push({ column: `${entry.table}.${entry.column}`, value: row[entry.column] ?? '', context: entry.context(row) });
    }
    return values;
  }

  it('re-seals every sealed column under the first key; a keyring of that key alone then opens everything', async () => {
    const before = await serviceWith(`a:${KEY_A.toString('base64')}`);
    const { project, secretKey } = await before.projects.createProject({ name: 'Rotation' });
    const auth = { authorization: `Bearer ${secretKey}` };
    const call = (service: Service, options: InjectOptions) => service.app.inject({ ...options, headers: { ...auth, ...options.headers } });
    const ok = async (service: Service, options: InjectOptions) => {
      const response = await call(service, options);
      expect(response.statusCode, `${options.url as string}: ${response.body}`).toBeLessThan(400);
      return response;
    };

    // Under key A: a provider and a sign-in in flight, an SSO connection and a sign-in in flight,
    // webhook secrets (current and previous), and an idempotent answer.
    await ok(before, {
      method: 'PUT',
      url: '/v1/auth/providers/corp',
      payload: { client_id: 'oauth-client', client_secret: 'oauth-client-secret', issuer: oidc.issuer, redirect_uris: [APP] },
    });
    const oauthStart = (await ok(before, { method: 'POST', url: '/v1/auth/oauth/corp', payload: { redirect_uri: APP } })).json<{
      url: string;
    }>();
    const organization = (await ok(before, { method: 'POST', url: '/v1/organizations', payload: { name: 'SSO corp' } })).json<{
      id: string;
    }>();
    await ok(before, {
      method: 'POST',
      url: `/v1/organizations/${organization.id}/domains`,
      payload: { domain: 'sso.example', verification: 'manual' },
    });
    await ok(before, {
      method: 'POST',
      url: `/v1/organizations/${organization.id}/sso-connections`,
      payload: {
        type: 'oidc',
        domains: ['sso.example'],
        redirect_uris: [APP],
        oidc: { issuer: oidc.issuer, client_id: 'sso-client', client_secret: 'sso-client-secret' },
      },
    });
    const ssoStart = (
      await ok(before, { method: 'POST', url: '/v1/auth/sso', payload: { email: 'sam@sso.example', redirect_uri: APP } })
    ).json<{
      url: string;
    }>();
    const endpoint = (
      await ok(before, { method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/r', events: ['*'] } })
    ).json<{ id: string }>();
    await ok(before, { method: 'POST', url: `/v1/webhooks/${endpoint.id}/rotate-secret` });
    const keyRequest: InjectOptions = {
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'rotated' },
      headers: { 'idempotency-key': 'rotate-1' },
    };
    const issued = await ok(before, keyRequest);
    // An authenticator enrolment: its TOTP secret is sealed.
    const member = (
      await ok(before, {
        method: 'POST',
        url: '/v1/auth/signup',
        payload: { email: 'totp@rotation.example', password: 'correct horse battery staple 9' },
      })
    ).json<{ session: { id: string } }>();
    const asMember = { authorization: `Bearer ${member.session.id}` };
    const totp = (await ok(before, { method: 'POST', url: '/v1/users/me/mfa/totp', headers: asMember })).json<{ secret: string }>();
    // A value sealed before keyrings existed (v1, no key id) must open and be re-sealed too.
    const previous = await before.db.kysely
      .selectFrom('webhook_endpoints')
      .select('previous_secret_sealed')
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    const context = `webhook_endpoint:${project.id}:${endpoint.id}`;
    const previousSecret = before.secrets.open(previous.previous_secret_sealed ?? '', context);
    await before.db.kysely
      .updateTable('webhook_endpoints')
      .set({ previous_secret_sealed: legacySeal(KEY_A, previousSecret, context) })
      .where('id', '=', endpoint.id)
      .execute();
    const sealedUnderA = await sealedValues(before);
    expect(new Set(sealedUnderA.map((item) => item.column))).toEqual(
      new Set(SEALED_COLUMNS.map((entry) => `${entry.table}.${entry.column}`)),
    );
    // The users sign in at their providers meanwhile; they come back after the rotation.
    const oauthLanding: ProviderLanding = await signInAtProvider(certificate, oauthStart.url, 'olga');
    const ssoLanding: ProviderLanding = await signInAtProvider(certificate, ssoStart.url, 'sam');
    if (oauthLanding.kind !== 'redirect' || ssoLanding.kind !== 'redirect') throw new Error('expected redirects back');

    // The keyring becomes "B,A"; the rotation runs while a service with that ring is up.
    const during = await serviceWith(`b:${KEY_B.toString('base64')},a:${KEY_A.toString('base64')}`);
    const ringBA = new SecretBox([
      { id: 'b', key: KEY_B },
      { id: 'a', key: KEY_A },
    ]);
    const report = await rotateSealedSecrets(during.db, ringBA, { batchRows: 2 });
    expect(report.key_id).toBe('b');
    expect(report.unreadable).toBe(0);
    const resealed = Object.values(report.columns).reduce((sum, counts) => sum + counts.resealed, 0);
    expect(resealed).toBe(sealedUnderA.length);
    for (const item of await sealedValues(during)) {
      expect(sealedKeyId(item.value), item.column).toBe('b');
      expect(() => new SecretBox([{ id: 'b', key: KEY_B }]).open(item.value, item.context), item.column).not.toThrow();
    }
    // Idempotent: a second run finds everything current.
    const again = await rotateSealedSecrets(during.db, ringBA);
    expect(Object.values(again.columns).reduce((sum, counts) => sum + counts.resealed, 0)).toBe(0);
    expect(Object.values(again.columns).reduce((sum, counts) => sum + counts.current, 0)).toBe(sealedUnderA.length);

    // A service with B alone: the replay, both sign-ins started under A, the webhook secrets.
    const after = await serviceWith(`b:${KEY_B.toString('base64')}`);
    const replay = await call(after, keyRequest);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(issued.body);
    const oauthDone = await ok(after, {
      method: 'POST',
      url: '/v1/auth/oauth/corp/callback',
      payload: {
        code: oauthLanding.url.searchParams.get('code'),
        state: oauthLanding.url.searchParams.get('state'),
        ...(oauthLanding.url.searchParams.get('iss') === null ? {} : { iss: oauthLanding.url.searchParams.get('iss') }),
      },
    });
    expect(oauthDone.json()).toMatchObject({ user: { email: 'olga@oauth.example' } });
    const redirected = await after.app.inject({ method: 'GET', url: `${ssoLanding.url.pathname}${ssoLanding.url.search}` });
    expect(redirected.statusCode, redirected.body).toBe(303);
    const code = new URL(String(redirected.headers.location)).searchParams.get('code');
    expect((await ok(after, { method: 'POST', url: '/v1/auth/sso/callback', payload: { code } })).json()).toMatchObject({
      user: { email: 'sam@sso.example' },
    });
    // The TOTP secret sealed under A checks a code under B.
    const confirmed = await ok(after, {
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: asMember,
      payload: { code: totpCode(totp.secret, timeStep(new Date())) },
    });
    expect(confirmed.json()).toMatchObject({ status: 'active' });
    const rotatedAgain = await ok(after, { method: 'POST', url: `/v1/webhooks/${endpoint.id}/rotate-secret` });
    expect(rotatedAgain.json<{ secret: string }>().secret).toMatch(/^whsec_/);
  });

  // Bug guarded: webhook signing secrets sat in clear in webhook_endpoints (migration 0004).
  it('seals at start the webhook secrets an older version stored in clear', async () => {
    const keyC = randomBytes(32).toString('base64');
    const service = await serviceWith(`c:${keyC}`);
    const { project } = await service.projects.createProject({ name: 'Legacy' });
    const now = new Date().toISOString();
    const plain = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    const previous = 'whsec_ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pz8=';
    await service.db.kysely
      .insertInto('webhook_endpoints')
      .values({
        id: 'we_legacyplain',
        project_id: project.id,
        url: 'https://hooks.example.com/legacy',
        failed_deliveries: 0,
        events: '["*"]',
        description: null,
        enabled: 1,
        secret: plain,
        previous_secret: previous,
        secret_sealed: null,
        previous_secret_sealed: null,
        previous_secret_expires_at: new Date(Date.now() + 60_000).toISOString(),
        created_at: now,
        updated_at: now,
      })
      .execute();
    // The next start (any process of the new version) seals them before serving.
    const restarted = await serviceWith(`c:${keyC}`);
    const row = await restarted.db.kysely
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', 'we_legacyplain')
      .executeTakeFirstOrThrow();
    expect({ secret: row.secret, previous_secret: row.previous_secret }).toEqual({ secret: '', previous_secret: null });
    expect(sealedKeyId(row.secret_sealed ?? '')).toBe('c');
    const context = `webhook_endpoint:${project.id}:we_legacyplain`;
    expect(restarted.secrets.open(row.secret_sealed ?? '', context)).toBe(plain);
    expect(restarted.secrets.open(row.previous_secret_sealed ?? '', context)).toBe(previous);
  });
});

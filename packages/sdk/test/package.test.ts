import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSdkService } from './harness.js';

const SDK_DIR = fileURLToPath(new URL('..', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** What a user's program does with the package, written once for `import` and once for `require`. */
const PROGRAM = (load: string) => `
${load}
const { createHmac } = require_('node:crypto');
const client = new SvcClient({ apiKey: process.env.SVC_KEY, baseUrl: process.env.SVC_URL });
const project = await client.project.get();
const organizations = await client.operations.listOrganizations({ query: { limit: 1 } });
const error = await client.wallets.get('wlt_0000000000000000000000').catch((caught) => caught);
const secret = 'whsec_' + Buffer.from('k'.repeat(32)).toString('base64');
const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', created_at: new Date().toISOString(), data: { endpoint_id: 'we_1' }, idempotency_key: 'evt_1' });
const t = Math.floor(Date.now() / 1000);
const header = 't=' + t + ',v1=' + createHmac('sha256', secret).update(t + '.' + body).digest('hex');
const event = await verifyWebhook(body, header, secret);
const refused = await verifyWebhook(body + ' ', header, secret).catch((caught) => caught);
const jwtRefused = await createSessionJwtVerifier({ baseUrl: process.env.SVC_URL, projectId: 'prj_x' }).verify('abc').catch((caught) => caught);
console.log(JSON.stringify({
  project: project.object,
  operations: [organizations.object, typeof client.operations.getAuditLog],
  error: [error instanceof ServiceError, error.status, error.code],
  event: event.type,
  refused: [refused instanceof SignatureVerificationError, refused.reason],
  sessionJwt: [jwtRefused instanceof SessionJwtError, jwtRefused.code],
}));
`;

const EXPECTED = {
  project: 'project',
  operations: ['list', 'function'],
  error: [true, 404, 'resource_missing'],
  event: 'webhook.test',
  refused: [true, 'signature_mismatch'],
  sessionJwt: [true, 'malformed'],
};

describe('the built package, installed the way a user installs it', () => {
  const ctx = useSdkService();
  const directory = mkdtempSync(join(tmpdir(), 'svc-sdk-package-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  beforeAll(() => {
    // npm pack runs the package's prepack (the build) and packs exactly the published files.
    execFileSync('npm', ['pack', '--silent', '--pack-destination', directory], { cwd: SDK_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(directory).find((file) => file.endsWith('.tgz'));
    if (tarball === undefined) throw new Error('npm pack made no tarball');
    // An empty project installs the tarball with npm itself; the SDK has no dependencies, so no
    // registry is asked (--offline).
    writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'empty-project', private: true }));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', `./${tarball}`], {
      cwd: directory,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }, 120_000);

  // Asynchronous: the server answering the child runs in this very process.
  const run = async (file: string) => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(directory, file)], {
      cwd: directory,
      env: { ...process.env, SVC_KEY: ctx().secretKey, SVC_URL: ctx().baseUrl },
      encoding: 'utf8',
    });
    return JSON.parse(stdout) as unknown;
  };

  it('holds dist/esm, dist/cjs (marked CommonJS), their declarations and the README, and nothing else', () => {
    const installed = join(directory, 'node_modules', '@svc', 'sdk');
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'dist', 'package.json']);
    expect(readdirSync(join(directory, 'node_modules')).sort()).toEqual(['.package-lock.json', '@svc']);
    const esm = readdirSync(join(installed, 'dist', 'esm'));
    const cjs = readdirSync(join(installed, 'dist', 'cjs'));
    expect(esm).toEqual(expect.arrayContaining(['index.js', 'index.d.ts']));
    expect(cjs).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'package.json']));
  });

  it('works with import (ESM)', async () => {
    writeFileSync(
      join(directory, 'esm.mjs'),
      PROGRAM(
        "import { SvcClient, ServiceError, SignatureVerificationError, verifyWebhook } from '@svc/sdk';\nimport { createSessionJwtVerifier, SessionJwtError } from '@svc/sdk/session-jwt';\nimport { createRequire } from 'node:module';\nconst require_ = createRequire(import.meta.url);",
      ),
    );
    expect(await run('esm.mjs')).toEqual(EXPECTED);
  });

  it('works with require (CommonJS)', async () => {
    writeFileSync(
      join(directory, 'cjs.cjs'),
      `(async () => {\n${PROGRAM("const { SvcClient, ServiceError, SignatureVerificationError, verifyWebhook } = require('@svc/sdk');\nconst { createSessionJwtVerifier, SessionJwtError } = require('@svc/sdk/session-jwt');\nconst require_ = require;\nif (typeof require.resolve('@svc/sdk') !== 'string' || !require.resolve('@svc/sdk').includes('dist/cjs')) throw new Error('require did not pick dist/cjs');")}\n})().catch((error) => { console.error(error); process.exit(1); });`,
    );
    expect(await run('cjs.cjs')).toEqual(EXPECTED);
  });

  it('type-checks for a TypeScript user, from an ES module and from a CommonJS module', () => {
    const consumer = `
import { SvcClient, ServiceError, verifyWebhook, type Wallet, type WebhookEvent } from '@svc/sdk';
export async function main(): Promise<void> {
  const client = new SvcClient({ apiKey: 'svc_sk_x', baseUrl: 'https://api.example.com' });
  const wallet: Wallet = await client.wallets.create({ user_id: 'usr_1', currency: 'USD', metadata: { plan: 'pro' } });
  const balance: { credits: number; currency: string } = await client.wallets.getBalance(wallet.id);
  const shapeB = await client.auth.login({ email: 'a@example.com', password: 'pw' }, { format: 'token' });
  const token: string = shapeB.session;
  for await (const item of client.wallets.list({ user_id: 'usr_1' })) console.log(item.balance + balance.credits, token);
  const organization = await client.operations.getOrganization({ path: { id: 'org_1' } });
  const name: string = organization.name;
  for await (const member of client.operations.listOrganizationMembers({ path: { id: organization.id } })) console.log(member.role, name);
  const event: WebhookEvent = await verifyWebhook('{}', 't=1,v1=00', 'whsec_x');
  if (event.type === 'wallet.credit.added') console.log(event.data.wallet_id);
  // @ts-expect-error: amount is a number
  await client.wallets.addCredits(wallet.id, { amount: '100' });
  console.log(new ServiceError({ status: 400, body: { type: 't', code: 'c', message: 'm' }, headers: new Headers() }).code);
}
`;
    writeFileSync(join(directory, 'consumer-esm.mts'), consumer);
    writeFileSync(join(directory, 'consumer-cjs.cts'), consumer);
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['consumer-esm.mts', 'consumer-cjs.cts'],
      }),
    );
    execFileSync(process.execPath, [TSC, '-p', join(directory, 'tsconfig.json')], { cwd: directory, encoding: 'utf8' });
  });

  it('verifies what the server signs: the test vector of the server’s own signing test', async () => {
    // Kept here too so a change in the HMAC message or key handling fails without a delivery. Runs
    // the installed package's CommonJS build, loaded as a user's require loads it.
    const sdk = createRequire(join(directory, 'index.cjs'))('@svc/sdk') as typeof import('../src/index.js');
    const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    const body =
      '{"id":"evt_test","type":"webhook.test","created_at":"2026-11-20T12:00:00.000Z","data":{"endpoint_id":"we_1"},"idempotency_key":"evt_test"}';
    const header = 't=1795262400,v1=da62a85bfa985b215dd15bbdc1e066a41d8fe2b853da9025e65997bdf37ee3d7';
    const now = new Date(1795262400 * 1000);
    expect(await sdk.verifyWebhook(body, header, secret, { now })).toEqual({
      id: 'evt_test',
      type: 'webhook.test',
      created_at: '2026-11-20T12:00:00.000Z',
      data: { endpoint_id: 'we_1' },
      idempotency_key: 'evt_test',
    });
    const refused = await sdk.verifyWebhook(body.replace('we_1', 'we_2'), header, secret, { now }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(sdk.SignatureVerificationError);
    expect(refused).toMatchObject({ reason: 'signature_mismatch' });
  });
});

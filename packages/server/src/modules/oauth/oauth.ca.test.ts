import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCertificate, startScriptedProvider, type ScriptedProvider, type TestCertificate } from '../../test/oauth-providers.js';

/**
 * Provider calls trust a certificate named in NODE_EXTRA_CA_CERTS. Node reads that variable once,
 * at process start, and the test's CA is made after this process started; so the check runs in a
 * child process started with the variable set (and, to show the check means something, without
 * it), making one request through the outbound module exactly as the OAuth module does.
 */
const run = promisify(execFile);
/** vite-node runs the TypeScript probe directly, so the test does not depend on a build. */
const viteNode = fileURLToPath(new URL('../../../../../node_modules/vite-node/vite-node.mjs', import.meta.url));
const probe = fileURLToPath(new URL('../../test/outbound-fetch-probe.ts', import.meta.url));

describe('provider calls and NODE_EXTRA_CA_CERTS', () => {
  let certificate: TestCertificate;
  let provider: ScriptedProvider;
  beforeAll(async () => {
    certificate = makeTestCertificate();
    provider = await startScriptedProvider(certificate);
  });
  afterAll(async () => {
    await provider?.close();
    certificate?.remove();
  });

  async function probeWith(env: Record<string, string>): Promise<string> {
    const inherited = { ...process.env };
    delete inherited['NODE_EXTRA_CA_CERTS'];
    const { stdout } = await run(process.execPath, [viteNode, probe, `${provider.issuer}/.well-known/openid-configuration`], {
      env: { ...inherited, ...env },
      timeout: 60_000,
    });
    return stdout.trim().split('\n').at(-1) ?? '';
  }

  it('trusts the self-signed provider when NODE_EXTRA_CA_CERTS names its certificate, and not otherwise', async () => {
    expect(await probeWith({ NODE_EXTRA_CA_CERTS: certificate.certFile })).toBe('status 200');
    expect(await probeWith({})).toMatch(/^failed .*(self[- ]signed|certificate)/i);
  }, 120_000);
});

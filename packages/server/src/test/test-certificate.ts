import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';

/** A certificate for HTTPS servers on loopback in tests, and a fetch that trusts it. */

export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  /** Deletes the files. */
  remove(): void;
}

/** A self-signed P-256 certificate for 127.0.0.1 and localhost (it is its own CA), made with openssl. */
export function makeTestCertificate(): TestCertificate {
  const directory = mkdtempSync(join(tmpdir(), 'svc-oauth-cert-'));
  const certFile = join(directory, 'cert.pem');
  const keyFile = join(directory, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=svc test provider',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return {
    certPem: readFileSync(certFile, 'utf8'),
    keyPem: readFileSync(keyFile, 'utf8'),
    certFile,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** fetch that trusts the test certificate. */
export function trustingFetch(certificate: TestCertificate): (url: string, init?: RequestInit) => Promise<Response> {
  const dispatcher = new Agent({ connect: { ca: certificate.certPem } });
  return (url, init = {}) => fetch(url, { ...init, redirect: 'manual', dispatcher } as unknown as RequestInit);
}

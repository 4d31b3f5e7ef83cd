import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { runEmailJob } from '../../server/src/modules/auth/auth.testing.js';
import { type TestService, useTestService } from '../../server/src/test/service.js';
import { SvcClient, type SvcClientOptions } from '../src/index.js';

export interface SdkService extends TestService {
  /** `http://127.0.0.1:<port>`, where the real server listens for this file. */
  readonly baseUrl: string;
  /** A client with this file's secret key; back-off shortened so retries cost little time. */
  client(options?: Partial<SvcClientOptions>): SvcClient;
  /** Sends the queued emails; `emailToken` then looks only at emails sent after this. */
  drainEmails(): Promise<void>;
  /** The token in the one email to `address` (verification or reset) sent since the last look. */
  emailToken(address: string): Promise<string>;
}

/**
 * The whole service on SQLite, listening on loopback, for the enclosing describe block: the SDK
 * talks to it over real HTTP, as it would in production.
 */
export function useSdkService(env: Readonly<Record<string, string>> = {}): () => SdkService {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-sdk-'));
  const ctx = useTestService('sqlite', { env: { DATA_DIR: dataDir, ...env } });
  let baseUrl: string | undefined;
  const seen = new Set<string>();
  const outbox = join(dataDir, 'outbox');
  const unseenEmails = async (service: TestService['service']) => {
    await runEmailJob(service);
    const files = existsSync(outbox) ? readdirSync(outbox).filter((file) => !seen.has(file)) : [];
    for (const file of files) seen.add(file);
    return files.map((file) => readFileSync(join(outbox, file), 'utf8'));
  };
  beforeAll(async () => {
    baseUrl = await ctx().service.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  return () => {
    const test = ctx();
    if (baseUrl === undefined) throw new Error('the server listens only inside tests');
    const url = baseUrl;
    return {
      ...test,
      baseUrl: url,
      client: (options = {}) =>
        new SvcClient({ apiKey: test.secretKey, baseUrl: url, retryDelayInitialMs: 5, retryDelayMaxMs: 50, ...options }),
      async drainEmails() {
        await unseenEmails(test.service);
      },
      async emailToken(address) {
        const emails = (await unseenEmails(test.service)).filter((text) => text.includes(address));
        if (emails.length !== 1) throw new Error(`${emails.length} new emails to ${address}, not one`);
        const text = emails[0] ?? '';
        // The verification email links to ?token=…; the reset email, without PASSWORD_RESET_URL, shows the token alone.
        const match = /token=([A-Za-z0-9_-]{43})/.exec(text) ?? /^([A-Za-z0-9_-]{43})$/m.exec(text);
        if (match?.[1] === undefined) throw new Error(`no token in the email to ${address}`);
        return match[1];
      },
    };
  };
}

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A loopback HTTP server answering each request with `handle`; every request is recorded with its raw body. */
export async function startStub(handle: (request: Received, response: ServerResponse, raw: IncomingMessage) => void) {
  const received: Received[] = [];
  const server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const request = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      handle(request, response, raw);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_stub', ...headers }).end(JSON.stringify(body));
}

let counter = 0;
export function uniqueEmail(): string {
  counter += 1;
  return `sdk.${Date.now().toString(36)}.${counter}@example.com`;
}
export const PASSWORD = 'Tq7!vexo-sdk-plumb-lantern';

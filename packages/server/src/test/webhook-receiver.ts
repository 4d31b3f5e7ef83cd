import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../lib/clock.js';

/** Webhook test tools: a clock moved by hand and a real HTTP receiver on loopback. */

/** A clock the tests move by hand, so retry gaps and lease expiry need no sleeping. */
export function manualClock(): Clock & { advance(milliseconds: number): void } {
  let now = Date.parse('2026-11-20T12:00:00.000Z');
  return { now: () => new Date(now), advance: (milliseconds) => void (now += milliseconds) };
}

export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body, exactly as it arrived. */
  readonly body: string;
  /** When it arrived (performance.now()). */
  readonly atMs: number;
}

export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 (port 0). Each path answers with what `answer` says (default
 * 200 "ok"); every request is recorded with its raw body.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const answers = new Map<string, (request: Received, seen: number) => Answer>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: Received = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        atMs: performance.now(),
      };
      received.push(entry);
      const seen = received.filter(
        (other) => other.path === entry.path && other.headers['webhook-id'] === entry.headers['webhook-id'],
      ).length;
      const answer = answers.get(entry.path)?.(entry, seen) ?? { status: 200, body: 'ok' };
      if (answer === 'hang') return;
      response.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    answer: (path: string, handler: (request: Received, seen: number) => Answer) => answers.set(path, handler),
    at: (path: string) => received.filter((entry) => entry.path === path),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

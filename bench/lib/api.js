import { Buffer } from 'node:buffer';
import http from 'node:http';
import { assertLoopback } from './processes.js';

const REQUEST_TIMEOUT_MS = 10_000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/**
 * One JSON request to the service on the loopback interface, for setting up a measurement (not for
 * load: that is autocannon's job). Resolves with the parsed body; throws unless the status is `expect`.
 */
export function requestJson({ method, url, headers = {}, body, expect }) {
  assertLoopback(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: {
          ...headers,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== expect) {
            reject(new Error(`${method} ${url} answered ${response.statusCode ?? 0}, not ${expect}: ${text.slice(0, 500)}`));
            return;
          }
          try {
            resolve(text === '' ? undefined : JSON.parse(text));
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${url} timed out after ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end(payload);
  });
}

/** `work(item)` for every item, at most `concurrency` at a time; results in the items' order. */
export async function mapConcurrently(items, concurrency, work) {
  const results = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index], index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

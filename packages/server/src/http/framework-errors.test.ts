import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestService } from '../test/service.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: { error: { type: string; code: string; request_id: string } };
}

/** A real request over loopback: Node's own parser refuses oversize headers before Fastify sees them. */
function send(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) as Answer['body'] });
        } catch (error) {
          reject(new Error(`not JSON: ${text}`, { cause: error }));
        }
      });
    });
    request.on('error', reject);
    request.end();
  });
}

// Refusals before any route or storage is reached: one dialect is enough.
describe('refusals before routing answer in the one error shape', () => {
  const testService = useTestService('sqlite');
  let port = 0;

  beforeAll(async () => {
    const { service } = testService();
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    port = (service.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await testService().service.app.close();
  });

  it('a path parameter over the length limit → 414 url_too_long (was Fastify FST_ERR_MAX_PARAM_LENGTH body)', async () => {
    const answer = await send(port, `/v1/wallets/${'a'.repeat(300)}`, { authorization: testService().auth.authorization });
    expect(answer.status).toBe(414);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'url_too_long' });
    expect(answer.body.error.request_id).toBe(answer.headers['request-id']);
  });

  it('a malformed percent-encoding in the path → 400 url_invalid', async () => {
    const answer = await send(port, '/v1/wallets/%E0%A4%A', { authorization: testService().auth.authorization });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('url_invalid');
  });

  it('a 20 KB header → 431 headers_too_large with a request id (was Node bare 431 body)', async () => {
    const answer = await send(port, '/v1/project', { 'x-big': 'a'.repeat(20_000) });
    expect(answer.status).toBe(431);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'headers_too_large' });
    expect(answer.body.error.request_id).toMatch(/^req_/);
    expect(answer.headers['request-id']).toBe(answer.body.error.request_id);
  });
});

import type { OutboundHttp } from './outbound-http.js';
import { type SpanAttributes, traced } from './tracing.js';

/**
 * A Fetch-API-shaped function over `OutboundHttp`, for libraries that take a custom fetch
 * (openid-client's `customFetch`). Every request still goes through the one outbound module: the
 * address checks, the timeout, no redirects and a bound on the bytes read. What `OutboundHttp`
 * reports as a failure is thrown as a `TypeError`, as `fetch` does for network errors; a body
 * larger than `responseBytesMax` is an error too, never a silently cut document.
 */
export type OutboundFetch = (url: string, init?: OutboundFetchInit) => Promise<Response>;

export interface OutboundFetchInit {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>> | Headers;
  readonly body?: unknown;
}

/** Discovery documents and key sets run to a few KiB; 256 KiB leaves room without inviting abuse. */
export const FETCH_RESPONSE_BYTES_MAX = 256 * 1024;

export class OutboundFetchError extends TypeError {
  readonly reason: 'refused' | 'timeout' | 'network' | 'too_large' | 'unsupported';
  constructor(reason: OutboundFetchError['reason'], message: string) {
    super(message);
    this.name = 'OutboundFetchError';
    this.reason = reason;
  }
}

export function outboundFetch(http: OutboundHttp, options: { responseBytesMax?: number } = {}): OutboundFetch {
  const bytesMax = options.responseBytesMax ?? FETCH_RESPONSE_BYTES_MAX;
  return async (url, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST') throw new OutboundFetchError('unsupported', `method ${method} is not supported`);
    const headers: Record<string, string> = {};
    if (init.headers instanceof Headers) init.headers.forEach((value, name) => (headers[name] = value));
    else Object.assign(headers, init.headers ?? {});
    const body = bodyText(init.body);
    const result = await traced(
      'outbound.request',
      'client',
      () => requestSpanAttributes(method, url),
      async (span) => {
        const answer = await http.send({
          method,
          url,
          headers,
          ...(body === undefined ? {} : { body }),
          // One byte more than allowed tells a body of exactly the limit from a longer one.
          responseBytesMax: bytesMax + 1,
        });
        if (answer.kind === 'failure') span.fail(answer.reason);
        else span.setAttribute('http.response.status_code', answer.status);
        return answer;
      },
    );
    if (result.kind === 'failure') throw new OutboundFetchError(result.reason, `${new URL(url).origin}: ${result.message}`);
    if (result.body.length > bytesMax) {
      throw new OutboundFetchError('too_large', `${new URL(url).origin} answered with more than ${bytesMax} bytes`);
    }
    const nullBody = result.status === 204 || result.status === 304 || result.status < 200;
    return new Response(nullBody ? null : new Uint8Array(result.body), { status: result.status, headers: result.headers });
  };
}

/**
 * The provider's host and port, never the path or query: a token endpoint's query or an
 * authorization code may ride in them. Headers (client secrets, bearer tokens) and bodies are left out too.
 */
function requestSpanAttributes(method: string, url: string): SpanAttributes {
  const parsed = URL.parse(url);
  if (parsed === null) return { 'http.request.method': method };
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { 'http.request.method': method, 'server.address': parsed.hostname, 'server.port': port };
}

function bodyText(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  throw new OutboundFetchError('unsupported', 'streamed request bodies are not supported');
}

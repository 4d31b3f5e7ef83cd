import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (port 0), for the tracing tests: it answers every
 * POST to /v1/traces with 200 and keeps what arrived. `spans()` reads the `http/json` exports;
 * `http/protobuf` ones are kept as bytes.
 */

export interface ExportRequest {
  readonly contentType: string;
  readonly body: Buffer;
}

export type AttributeValue = string | number | boolean;

/** One exported span, flattened from OTLP/JSON's resource and scope nesting. */
export interface ReceivedSpan {
  readonly serviceName: string | undefined;
  readonly name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}
interface OtlpSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
}
interface OtlpExport {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

const REQUEST_BYTES_MAX = 16 * 1024 * 1024;

export async function startOtlpReceiver() {
  const requests: ExportRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= REQUEST_BYTES_MAX) chunks.push(chunk);
    });
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        requests.push({ contentType: request.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      }
      const json = (request.headers['content-type'] ?? '').startsWith('application/json');
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  function spans(): ReceivedSpan[] {
    const found: ReceivedSpan[] = [];
    for (const exported of requests) {
      if (!exported.contentType.startsWith('application/json')) continue;
      const parsed = JSON.parse(exported.body.toString('utf8')) as OtlpExport;
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const serviceName = attributeMap(resourceSpans.resource?.attributes)['service.name'];
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            found.push({
              serviceName: typeof serviceName === 'string' ? serviceName : undefined,
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              attributes: attributeMap(span.attributes),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
    }
    return found;
  }

  return {
    /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans,
    /** Waits (at most `timeoutMs`) until `done` holds for the spans received so far. */
    async waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = spans();
        if (done(current)) return current;
        if (Date.now() > deadline)
          throw new Error(`the spans expected did not arrive within ${timeoutMs} ms; got ${JSON.stringify(current)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

function attributeMap(attributes: OtlpAttribute[] | undefined): Record<string, AttributeValue> {
  const map: Record<string, AttributeValue> = {};
  for (const { key, value } of attributes ?? []) {
    const plain = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (plain !== undefined) map[key] = typeof plain === 'string' && value.intValue !== undefined ? Number(plain) : plain;
  }
  return map;
}

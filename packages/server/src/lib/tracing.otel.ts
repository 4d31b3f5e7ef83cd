import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config.js';
import type { CurrentSpan, OpenSpan, RequestSpan, SpanAttributes, SpanKind, Tracer } from './tracing.js';

/*
 * The OpenTelemetry side of lib/tracing.ts, loaded only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
 * Spans are created with an explicit parent, kept in this module's own AsyncLocalStorage, so that
 * nothing here registers a global context manager, propagator or tracer provider.
 */

const KINDS: Readonly<Record<SpanKind, OtelSpanKind>> = { client: OtelSpanKind.CLIENT, internal: OtelSpanKind.INTERNAL };

export function createOtelTracer(config: TracingConfig, logger: Logger): Tracer {
  // A collector that is down or refuses an export loses those spans and nothing else: the SDK
  // reports the failure here, once per export, and the requests go on.
  setGlobalErrorHandler((error) => logger.warn({ err: error, endpoint: config.endpoint }, 'could not export traces'));
  const exporterOptions = { url: `${config.endpoint}/v1/traces` };
  const exporter = config.protocol === 'http/json' ? new JsonTraceExporter(exporterOptions) : new ProtobufTraceExporter(exporterOptions);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.scheduleDelayMs })],
  });
  const tracer = provider.getTracer('svc');
  const propagator = new W3CTraceContextPropagator();
  const current = new AsyncLocalStorage<Context>();

  return {
    inSpan(name, kind, attributes, work) {
      const parent = current.getStore() ?? ROOT_CONTEXT;
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes }, parent);
      const handle = currentSpan(span);
      return current
        .run(trace.setSpan(parent, span), () => work(handle))
        .then(
          (result) => {
            span.end();
            return result;
          },
          (error: unknown) => {
            // The error's kind only: its message may quote what the request sent.
            failSpan(span, errorKind(error));
            span.end();
            throw error;
          },
        );
    },
    openSpan(name, kind, attributes) {
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes }, current.getStore() ?? ROOT_CONTEXT);
      return { ...currentSpan(span), end: () => span.end() } satisfies OpenSpan;
    },
    startRequest(start) {
      const carrier: Record<string, string> = {};
      if (start.traceparent !== undefined) carrier['traceparent'] = start.traceparent;
      if (start.tracestate !== undefined) carrier['tracestate'] = start.tracestate;
      const parent = start.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
      return requestSpan(tracer, current, parent, start.method, start.route);
    },
    async shutdown() {
      // Failures were already reported through the error handler; stopping never fails for them.
      await provider.forceFlush().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    },
  };
}

function requestSpan(
  tracer: OtelTracer,
  current: AsyncLocalStorage<Context>,
  parent: Context,
  method: string,
  route: string | undefined,
): RequestSpan {
  const attributes: SpanAttributes =
    route === undefined ? { [ATTR_HTTP_REQUEST_METHOD]: method } : { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route };
  // The span name of the HTTP conventions: method and route template, or the method alone.
  const span = tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: OtelSpanKind.SERVER, attributes }, parent);
  const context = trace.setSpan(parent, span);
  let ended = false;
  return {
    enter(continuation) {
      current.run(context, continuation);
    },
    end(result) {
      if (ended) return;
      ended = true;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
      if (result.projectId !== undefined) span.setAttribute('svc.project_id', result.projectId);
      // The HTTP conventions: a server span fails on a 5xx only; a 4xx is the client's fault.
      if (result.status >= 500) failSpan(span, String(result.status));
      span.end();
    },
  };
}

function currentSpan(span: Span): CurrentSpan {
  return {
    setAttribute: (name, value) => void span.setAttribute(name, value),
    fail: (reason) => failSpan(span, reason),
  };
}

function failSpan(span: Span, reason: string): void {
  span.setAttribute('error.type', reason);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** A failure's kind for `error.type`: its code (`40001`, `ECONNREFUSED`, `rate_limited`) or its class name. */
function errorKind(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') return String(code);
    if (error instanceof Error) return error.name;
  }
  return 'unknown';
}

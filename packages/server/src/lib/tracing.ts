import type { Logger } from 'pino';
import type { TracingConfig } from '../config.js';

/*
 * Traces (docs/operations.md, "Traces"): the facade that the HTTP layer and the modules call, and
 * that does nothing until `startTracing` installs a tracer.
 *
 * Why a facade of our own rather than `@opentelemetry/api` everywhere: with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` unset, no OpenTelemetry package is loaded at all (the SDK comes in
 * through a dynamic import in `startTracing`), and a traced function costs one check of a module
 * variable. Attributes are given by the caller, never taken from requests wholesale, so that no
 * credential, header, query string or body reaches a span.
 */

/** What a span may carry: route templates, ids, status codes, dialects; never a secret, a header or a body. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** `client` for calls out of the process (database, webhook receivers, identity providers); `internal` otherwise. */
export type SpanKind = 'client' | 'internal';

/** The span a traced function runs in, for what it learns on the way (a status code, a failure's kind). */
export interface CurrentSpan {
  setAttribute(name: string, value: string | number | boolean): void;
  /** Marks the span failed; `reason` is a short kind (`timeout`, `http_error`), never a message with data in it. */
  fail(reason: string): void;
}

/** A span begun and ended at different places (a request's own transaction: opened in one hook, committed in another). */
export interface OpenSpan extends CurrentSpan {
  end(): void;
}

/** A request's span, from its onRequest hook to its onResponse hook. */
export interface RequestSpan {
  /** Runs `continuation` (the rest of the request's hooks and handler) with this span as the current one. */
  enter(continuation: () => void): void;
  end(result: { readonly status: number; readonly projectId: string | undefined }): void;
}

export interface RequestStart {
  readonly method: string;
  /** The route template (`/v1/wallets/:id/credit`), undefined when no route matched. */
  readonly route: string | undefined;
  /** The incoming W3C trace context headers, when the caller sent them. */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
}

export interface Tracer {
  inSpan<T>(name: string, kind: SpanKind, attributes: SpanAttributes, work: (span: CurrentSpan) => Promise<T>): Promise<T>;
  openSpan(name: string, kind: SpanKind, attributes: SpanAttributes): OpenSpan;
  startRequest(start: RequestStart): RequestSpan;
  /** Sends the spans still waiting, then stops. */
  shutdown(): Promise<void>;
}

const NO_SPAN: CurrentSpan = {
  setAttribute() {},
  fail() {},
};

let installed: Tracer | undefined;

/** The tracer `startTracing` installed, or undefined when traces are off. */
export function activeTracer(): Tracer | undefined {
  return installed;
}

/**
 * Runs `work` in a child span of the current one; with traces off, just runs it. `attributes` is a
 * function so that nothing is built for a span that will not exist.
 */
export function traced<T>(
  name: string,
  kind: SpanKind,
  attributes: () => SpanAttributes,
  work: (span: CurrentSpan) => Promise<T>,
): Promise<T> {
  return installed === undefined ? work(NO_SPAN) : installed.inSpan(name, kind, attributes(), work);
}

/** A span begun now and ended by the caller; undefined with traces off, so the caller skips its own bookkeeping too. */
export function openSpan(name: string, kind: SpanKind, attributes: () => SpanAttributes): OpenSpan | undefined {
  return installed?.openSpan(name, kind, attributes());
}

export interface TracingHandle {
  /** Sends the spans still waiting and uninstalls the tracer. */
  stop(): Promise<void>;
}

/**
 * Loads the OpenTelemetry SDK (only now) and installs a tracer that exports to `config.endpoint`;
 * failed exports are logged at `warn`. One tracer per process: the HTTP hooks and the modules find it here.
 */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<TracingHandle> {
  const { createOtelTracer } = await import('./tracing.otel.js');
  const tracer = createOtelTracer(config, logger);
  installed = tracer;
  return {
    async stop() {
      if (installed === tracer) installed = undefined;
      await tracer.shutdown();
    },
  };
}

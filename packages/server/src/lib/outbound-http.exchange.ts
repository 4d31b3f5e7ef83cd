import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';

/** What `OutboundHttp.send` (outbound-http.ts) answers: the response, read up to its bound, or why there is none. */

export type OutboundResult =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** Lower-case names; the first value of a repeated header. */
      readonly headers: Readonly<Record<string, string>>;
      /** At most `responseBytesMax` bytes. */
      readonly body: Buffer;
      readonly bodyTruncated: boolean;
      readonly latencyMs: number;
    }
  | {
      readonly kind: 'failure';
      /** `refused`: the URL or the address it resolved to is not allowed; nothing was sent. */
      readonly reason: 'refused' | 'timeout' | 'network';
      readonly message: string;
      readonly latencyMs: number;
    };

/** Raised inside the connection step when the resolved or connected address is not allowed. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_OUTBOUND_ADDRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

/**
 * One request's answer, gathered by undici's dispatch handler callbacks: the status, the headers
 * (lower-case names, the first value of a repeated one), and at most `bytesMax` bytes of the body.
 * The whole exchange is bounded by `timeoutMs` from the start, whatever stage it is in: at the
 * deadline the result is settled and the request aborted as soon as undici lets it be.
 *
 * Once the status and headers have arrived the outcome is decided: a body cut short (a reset, the
 * deadline) keeps what arrived, and one longer than `bytesMax` is cut there, the connection closed
 * rather than the rest downloaded.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly #started: number;
  readonly #bytesMax: number;
  readonly #timeoutMs: number;
  readonly #resolve: (result: OutboundResult) => void;
  readonly #timer: NodeJS.Timeout;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #timedOut = false;
  #status: number | undefined;
  #headers: Record<string, string> = {};
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(options: { started: number; bytesMax: number; timeoutMs: number; resolve: (result: OutboundResult) => void }) {
    this.#started = options.started;
    this.#bytesMax = options.bytesMax;
    this.#timeoutMs = options.timeoutMs;
    this.#resolve = options.resolve;
    this.#timer = setTimeout(() => this.#deadline(), options.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) controller.abort(new Error('the exchange is over'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are informational; the final status follows.
    if (statusCode < 200) return;
    this.#status = statusCode;
    const firstValues: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      const first = Array.isArray(value) ? value[0] : value;
      if (first !== undefined) firstValues[name.toLowerCase()] = first;
    }
    this.#headers = firstValues;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    const room = this.#bytesMax - this.#size;
    if (chunk.length > room) {
      this.#chunks.push(chunk.subarray(0, room));
      this.#size += room;
      this.#settleResponse(true);
      controller.abort(new Error('response body longer than what is read'));
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    this.#settleResponse(false);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#status !== undefined) {
      this.#settleResponse(false);
      return;
    }
    this.#settle({ kind: 'failure', ...describeFailure(error, this.#timedOut, this.#timeoutMs), latencyMs: elapsedSince(this.#started) });
  }

  #deadline(): void {
    this.#timedOut = true;
    const message = timeoutMessage(this.#timeoutMs);
    if (this.#status !== undefined) this.#settleResponse(false);
    else this.#settle({ kind: 'failure', reason: 'timeout', message, latencyMs: elapsedSince(this.#started) });
    this.#controller?.abort(new Error(message));
  }

  #settleResponse(truncated: boolean): void {
    if (this.#status === undefined) return;
    this.#settle({
      kind: 'response',
      status: this.#status,
      headers: this.#headers,
      body: this.#chunks.length === 1 && this.#chunks[0] !== undefined ? this.#chunks[0] : Buffer.concat(this.#chunks),
      bodyTruncated: truncated,
      latencyMs: elapsedSince(this.#started),
    });
  }

  #settle(result: OutboundResult): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#resolve(result);
  }
}

function describeFailure(
  error: unknown,
  aborted: boolean,
  timeoutMs: number,
): { reason: 'refused' | 'timeout' | 'network'; message: string } {
  const chain: unknown[] = [];
  for (let current: unknown = error; current !== undefined && chain.length < 5; current = (current as { cause?: unknown }).cause) {
    chain.push(current);
  }
  if (chain.some((item) => item instanceof AddressRefusedError)) {
    const refused = chain.find((item) => item instanceof AddressRefusedError);
    return { reason: 'refused', message: `address refused: ${refused instanceof Error ? refused.message : ''}` };
  }
  const code = chain.map((item) => (item as { code?: unknown }).code).find((value) => typeof value === 'string');
  if (aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { reason: 'timeout', message: timeoutMessage(timeoutMs) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { reason: 'network', message: typeof code === 'string' ? `${code}: ${message}` : message };
}

function timeoutMessage(timeoutMs: number): string {
  return `no complete answer within ${timeoutMs} ms`;
}

export function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}

import { randomUuid } from './crypto.js';
import { type ErrorBody, SvcConnectionError, ServiceError, SvcTimeoutError } from './errors.js';

/** What a client was built with; every field but `baseUrl` has a default. */
export interface TransportOptions {
  /** The service's address, e.g. `https://api.example.com` (a trailing `/v1` is accepted too). */
  readonly baseUrl: string;
  /** A `fetch` of your own (tests, proxies, instrumentation); default: the global one. */
  readonly fetch?: typeof fetch;
  /** How long one attempt may take before it is abandoned; default 30,000 ms. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, for requests that are safe to retry; default 2. */
  readonly maxRetries?: number;
  /** The first back-off delay; it doubles on each retry (with jitter), up to `retryDelayMaxMs`. Default 500 ms. */
  readonly retryDelayInitialMs?: number;
  /** Default 8,000 ms. A `Retry-After` of up to 60 s is honoured even when longer. */
  readonly retryDelayMaxMs?: number;
  /** Sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called after every attempt that got an answer: for logs, metrics, or reading response headers. */
  readonly onResponse?: (response: ResponseInfo) => void;
}

/** Per call: every method takes these as its last argument. */
export interface RequestOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  readonly maxRetries?: number;
  /**
   * POST only. The key the service de-duplicates the request by. By default the SDK sends the
   * body's `idempotency_key` where the route takes one, or else a new random key, and reuses it on
   * every retry. `false` sends none: the request is then never retried, except after a 429 (a
   * rate-limited request never ran).
   */
  readonly idempotencyKey?: string | false;
  /**
   * Secret-key calls made for a person (log in, sign-up, refresh): their address and browser, sent
   * as `X-End-User-IP` and `X-End-User-Agent`. Log-in throttling, rate limits, the session's `ip`
   * and `user_agent` and audit entries then name them instead of your server. The service ignores
   * both on session-token calls.
   */
  readonly endUser?: EndUser;
  readonly headers?: Readonly<Record<string, string>>;
  readonly onResponse?: (response: ResponseInfo) => void;
}

/** The person behind a server-to-server call (`RequestOptions.endUser`). */
export interface EndUser {
  /** An IPv4 or IPv6 address, e.g. from your own proxy's `X-Forwarded-For` after you have checked it. */
  readonly ip?: string;
  readonly userAgent?: string;
}

export interface ResponseInfo {
  readonly method: string;
  /** The path requested, e.g. `/v1/wallets/wlt_…/credits`. */
  readonly path: string;
  readonly status: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly requestId: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** The service answered from its idempotency store (`Idempotent-Replayed: true`): nothing ran twice. */
  readonly replayed: boolean;
  readonly headers: Headers;
}

/**
 * What a request is authorized by: a secret key or a session token, sent as `Authorization: Bearer`,
 * or the dashboard's cookie session (`SvcDashboardClient`): the browser sends the HttpOnly cookie
 * with same-origin requests, and every change carries the session's CSRF token as `X-CSRF-Token`.
 */
export type Credential =
  | { readonly kind: 'secret'; readonly key: string }
  | { readonly kind: 'session'; readonly token: string }
  | { readonly kind: 'cookie'; readonly csrfToken: () => string | undefined };

/**
 * How a request may be retried:
 * - `read`: GET; always safe.
 * - `keyed`: a POST the service stores for replay under its `Idempotency-Key`; safe with the same key.
 * - `unkeyed`: a POST sent with `idempotencyKey: false`, and every PATCH and DELETE: retried only
 *   after a 429.
 */
export type RetryMode = 'read' | 'keyed' | 'unkeyed';

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: object;
  /** `form` sends the body as `application/x-www-form-urlencoded` (the SAML ACS); default JSON. */
  readonly bodyEncoding?: 'json' | 'form';
  readonly credential: Credential;
  readonly retry: RetryMode;
}

const TIMEOUT_MS_DEFAULT = 30_000;
const RETRIES_MAX_DEFAULT = 2;
const RETRY_DELAY_INITIAL_MS_DEFAULT = 500;
const RETRY_DELAY_MAX_MS_DEFAULT = 8_000;
/** A longer `Retry-After` is the caller's decision: the error is thrown at once with `retryAfterSeconds`. */
const RETRY_AFTER_SECONDS_MAX = 60;

/** Marks the abort the SDK's own timer caused, as distinct from the caller's signal. */
const TIMED_OUT = Symbol('timed out');

type Attempt =
  | { readonly kind: 'answer'; readonly response: Response; readonly text: string }
  | { readonly kind: 'no_answer'; readonly error: SvcConnectionError };

export class Transport {
  readonly options: TransportOptions;
  readonly #baseUrl: string;

  constructor(options: TransportOptions) {
    if (typeof options.baseUrl !== 'string' || options.baseUrl === '')
      throw new TypeError('baseUrl is required, e.g. "https://api.example.com".');
    this.options = options;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  }

  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<T> {
    const signal = options.signal;
    signal?.throwIfAborted();
    const idempotencyKey = await this.#idempotencyKey(spec, options);
    const retryMode = spec.method === 'POST' && options.idempotencyKey === false ? 'unkeyed' : spec.retry;
    const retriesMax = options.maxRetries ?? this.options.maxRetries ?? RETRIES_MAX_DEFAULT;
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? TIMEOUT_MS_DEFAULT;
    const url = this.#url(spec);
    const init = this.#init(spec, options, idempotencyKey);

    for (let attempt = 1; ; attempt += 1) {
      const result = await this.#attempt(url, init, timeoutMs, signal);
      const retriesLeft = attempt <= retriesMax;
      if (result.kind === 'no_answer') {
        if (!retriesLeft || retryMode === 'unkeyed') throw result.error;
        await sleep(this.#backoffMs(attempt), signal);
        continue;
      }
      const { response, text } = result;
      const info: ResponseInfo = {
        method: spec.method,
        path: spec.path,
        status: response.status,
        attempt,
        requestId: response.headers.get('request-id') ?? undefined,
        idempotencyKey,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        headers: response.headers,
      };
      this.options.onResponse?.(info);
      options.onResponse?.(info);
      if (response.ok) return parseSuccess(response, text) as T;

      const error = toSvcError(response, text);
      const delayMs = retriesLeft ? this.#retryDelayMs(error, retryMode, attempt) : undefined;
      if (delayMs === undefined) throw error;
      await sleep(delayMs, signal);
    }
  }

  /** The delay before retrying an error answer, or `undefined` when it must not be retried. */
  #retryDelayMs(error: ServiceError, mode: RetryMode, attempt: number): number | undefined {
    const rateLimited = error.status === 429;
    const retryable = rateLimited || (mode !== 'unkeyed' && (error.status >= 500 || error.code === 'idempotency_key_in_use'));
    if (!retryable) return undefined;
    if (error.retryAfterSeconds !== undefined) {
      if (error.retryAfterSeconds > RETRY_AFTER_SECONDS_MAX) return undefined;
      return error.retryAfterSeconds * 1000;
    }
    return this.#backoffMs(attempt);
  }

  /** Exponential back-off with "equal jitter": half the delay fixed, half random. */
  #backoffMs(attempt: number): number {
    const initial = this.options.retryDelayInitialMs ?? RETRY_DELAY_INITIAL_MS_DEFAULT;
    const max = this.options.retryDelayMaxMs ?? RETRY_DELAY_MAX_MS_DEFAULT;
    const delay = Math.min(max, initial * 2 ** (attempt - 1));
    return delay / 2 + Math.random() * (delay / 2);
  }

  async #attempt(url: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined): Promise<Attempt> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    try {
      const response = await (this.options.fetch ?? globalThis.fetch)(url, { ...init, signal: controller.signal });
      const text = await response.text();
      return { kind: 'answer', response, text };
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      if (controller.signal.reason === TIMED_OUT) return { kind: 'no_answer', error: new SvcTimeoutError(timeoutMs) };
      return { kind: 'no_answer', error: new SvcConnectionError(`No answer from ${url}: ${describe(error)}`, { cause: error }) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  async #idempotencyKey(spec: RequestSpec, options: RequestOptions): Promise<string | undefined> {
    if (spec.method !== 'POST' || spec.retry !== 'keyed' || options.idempotencyKey === false) return undefined;
    if (options.idempotencyKey !== undefined) return options.idempotencyKey;
    const fromBody = (spec.body as { idempotency_key?: unknown } | undefined)?.idempotency_key;
    if (typeof fromBody === 'string') return fromBody;
    return `sdk_${await randomUuid()}`;
  }

  #url(spec: RequestSpec): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) query.append(name, String(value));
    const search = query.toString();
    return `${this.#baseUrl}${spec.path}${search === '' ? '' : `?${search}`}`;
  }

  #init(spec: RequestSpec, options: RequestOptions, idempotencyKey: string | undefined): RequestInit {
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...options.headers };
    const init = { method: spec.method, headers, ...credentialInit(spec, headers) };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (options.endUser?.ip !== undefined) headers['x-end-user-ip'] = options.endUser.ip;
    if (options.endUser?.userAgent !== undefined) headers['x-end-user-agent'] = options.endUser.userAgent;
    if (spec.body === undefined) return init;
    if (spec.bodyEncoding === 'form') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      return { ...init, body: new URLSearchParams(spec.body as Record<string, string>).toString() };
    }
    headers['content-type'] = 'application/json';
    return { ...init, body: JSON.stringify(spec.body) };
  }
}

/**
 * Sets the credential's headers, last, so that no header of the options replaces them, and answers
 * what the request needs besides. A cookie session sends no Authorization header (the service would
 * take it instead of the cookie); a change carries the CSRF token, and the cookie goes with same-origin
 * requests only, never to another site.
 */
function credentialInit(spec: RequestSpec, headers: Record<string, string>): Pick<RequestInit, 'credentials'> {
  const { credential } = spec;
  if (credential.kind !== 'cookie') {
    headers['authorization'] = `Bearer ${credential.kind === 'secret' ? credential.key : credential.token}`;
    return {};
  }
  const csrfToken = credential.csrfToken();
  if (spec.method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  return { credentials: 'same-origin' };
}

function parseSuccess(response: Response, text: string): unknown {
  if (response.status === 204 || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // The few operations that answer something else (Prometheus text, JSON lines, a page, SAML
    // metadata) say so in Content-Type; their body is returned as text.
    const media = (response.headers.get('content-type') ?? 'application/json').split(';')[0]?.trim().toLowerCase() ?? '';
    if (media !== 'application/json' && !media.endsWith('+json')) return text;
    throw unexpected(response, 'The service answered with a body that is not JSON.');
  }
}

function toSvcError(response: Response, text: string): ServiceError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = (body as { error?: Partial<ErrorBody> } | undefined)?.error;
  if (error === undefined || typeof error.code !== 'string' || typeof error.message !== 'string') {
    return unexpected(response, `The service answered ${response.status} without an error body.`);
  }
  return new ServiceError({
    status: response.status,
    body: { type: error.type ?? 'api_error', code: error.code, message: error.message, ...pick(error, 'param', 'request_id') },
    headers: response.headers,
    retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
  });
}

function unexpected(response: Response, message: string): ServiceError {
  return new ServiceError({
    status: response.status,
    body: { type: 'api_error', code: 'unexpected_response', message },
    headers: response.headers,
    retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
  });
}

function pick(error: Partial<ErrorBody>, ...names: Array<'param' | 'request_id'>): Partial<Pick<ErrorBody, 'param' | 'request_id'>> {
  const picked: { param?: string; request_id?: string } = {};
  for (const name of names) {
    const value = error[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

/** `Retry-After` as seconds or as an HTTP date (RFC 9110 section 10.2.3). */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function sleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

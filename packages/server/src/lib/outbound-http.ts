import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector } from 'undici';
import { classifyAddress, isForbiddenHostname } from './outbound-http.addresses.js';
import { AddressRefusedError, elapsedSince, Exchange, type OutboundResult } from './outbound-http.exchange.js';

export type { OutboundResult } from './outbound-http.exchange.js';

/*
 * THE ONE MODULE FOR OUTBOUND HTTP REQUESTS TO URLS A USER SUPPLIED (webhook endpoints, and any
 * other address that comes from a project's configuration).
 *
 * Why one module: such a URL can name the service's own network (SSRF: `https://169.254.169.254/`,
 * a private database, localhost). This module refuses those in every spelling, resolves names
 * itself, checks every resolved address, and connects only to the address it checked, so a DNS
 * answer that changes between the check and the connection (DNS rebinding) cannot slip past. It
 * also never follows redirects, bounds the time of every request and the bytes it reads back.
 *
 * ESLint (`eslint.config.js`) forbids `fetch`, `undici` and the request functions of `node:http`
 * and `node:https` everywhere else in the server; use `OutboundHttp.send` instead.
 *
 * Which addresses are public is outbound-http.addresses.ts's; how one request's answer is read and
 * bounded, outbound-http.exchange.ts's.
 */

/** Resolves a host name to all of its addresses. Tests pass a fake one; production uses the OS resolver. */
export type DnsLookup = (hostname: string) => Promise<readonly LookupAddress[]>;

export const OUTBOUND_TIMEOUT_MS = 10_000;
/** What a response body is read up to; the rest is discarded (and the connection closed). */
export const OUTBOUND_RESPONSE_BYTES_MAX = 4096;
export const URL_LENGTH_MAX = 2048;
const DNS_TIMEOUT_MS = 5_000;
const USER_AGENT = 'svc-webhooks/1.0';
/** URL texts whose syntax check `send` remembers; past it, the memory starts over. */
const SYNTAX_CHECKS_REMEMBERED_MAX = 10_000;

export interface OutboundHttpOptions {
  /** `WEBHOOK_ALLOW_PRIVATE=1`: `http://` and private, loopback and similar addresses are allowed (development, tests). */
  readonly allowPrivate: boolean;
  /** Whether `http://` URLs are allowed; defaults to `allowPrivate`. OAuth allows private HTTPS providers without plain HTTP. */
  readonly allowHttp?: boolean;
  /**
   * Certificate authorities to trust instead of the default store (which includes
   * NODE_EXTRA_CA_CERTS, read by Node at process start). For tests that make their own CA after start.
   */
  readonly trustedCa?: string;
  /** Sent unless the request names its own. */
  readonly userAgent?: string;
  readonly lookup?: DnsLookup;
  /** The whole exchange: connection, request, response headers and the bounded body read. */
  readonly timeoutMs?: number;
}

/** Why a URL is refused: `invalid` does not parse or is not https; `forbidden` names or resolves to a non-public address. */
export type UrlRefusal = { readonly reason: 'invalid' | 'forbidden'; readonly message: string };

export type UrlCheck = { readonly ok: true; readonly url: string } | ({ readonly ok: false } & UrlRefusal);

export interface OutboundRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly responseBytesMax?: number;
}

const systemLookup: DnsLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export class OutboundHttp {
  readonly #allowPrivate: boolean;
  readonly #allowHttp: boolean;
  readonly #trustedCa: string | undefined;
  readonly #userAgent: string;
  readonly #lookup: DnsLookup;
  readonly #timeoutMs: number;
  readonly #agent: Agent;
  readonly #syntaxChecked = new Map<string, { ok: true; url: URL } | ({ ok: false } & UrlRefusal)>();

  constructor(options: OutboundHttpOptions) {
    this.#allowPrivate = options.allowPrivate;
    this.#allowHttp = options.allowHttp ?? options.allowPrivate;
    this.#trustedCa = options.trustedCa;
    this.#userAgent = options.userAgent ?? USER_AGENT;
    this.#lookup = options.lookup ?? systemLookup;
    this.#timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
    this.#agent = new Agent({ connect: this.#connector(), connectTimeout: this.#timeoutMs });
  }

  /**
   * Whether `raw` may be used as a target: parses, is https (unless private targets are allowed),
   * and neither names nor resolves to a non-public address. A name that does not resolve now is
   * accepted: every request checks again at connection time.
   */
  async checkUrl(raw: string): Promise<UrlCheck> {
    const syntax = this.#checkSyntax(raw);
    if (!syntax.ok || this.#allowPrivate) return syntax.ok ? { ok: true, url: syntax.url.href } : syntax;
    let addresses: readonly LookupAddress[];
    try {
      addresses = await this.#resolve(syntax.url.hostname);
    } catch {
      return { ok: true, url: syntax.url.href };
    }
    const refused = addresses.find((entry) => classifyAddress(entry.address) !== 'public');
    if (refused !== undefined) {
      return {
        ok: false,
        reason: 'forbidden',
        message: `The URL's host resolves to ${refused.address}, a ${describeClass(refused.address)} address.`,
      };
    }
    return { ok: true, url: syntax.url.href };
  }

  /**
   * Sends one request and reads at most `responseBytesMax` bytes of the answer. Never throws for
   * what the other side does (refusal, timeout, reset): those are results. Redirects are answers,
   * not followed.
   *
   * The exchange runs on undici's dispatcher interface with a handler of its own (`Exchange`)
   * rather than `request()` with `AbortSignal.timeout`, whose timer and signal outlive the exchange
   * by the whole timeout: the webhook worker sends thousands of these a second, and that machinery
   * was about half of its CPU per delivery (docs/adr/0006-webhook-delivery.md).
   */
  send(outbound: OutboundRequest): Promise<OutboundResult> {
    const started = performance.now();
    const syntax = this.#checkSyntaxOf(outbound.url);
    if (!syntax.ok) {
      return Promise.resolve({ kind: 'failure', reason: 'refused', message: syntax.message, latencyMs: elapsedSince(started) });
    }
    const { url } = syntax;
    return new Promise((resolve) => {
      const exchange = new Exchange({
        started,
        bytesMax: outbound.responseBytesMax ?? OUTBOUND_RESPONSE_BYTES_MAX,
        timeoutMs: this.#timeoutMs,
        resolve,
      });
      try {
        this.#agent.dispatch(
          {
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method: outbound.method,
            headers: { 'user-agent': this.#userAgent, ...outbound.headers },
            ...(outbound.body === undefined ? {} : { body: outbound.body }),
            headersTimeout: this.#timeoutMs,
            bodyTimeout: this.#timeoutMs,
          },
          exchange,
        );
      } catch (error) {
        exchange.onResponseError(undefined, error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /**
   * `#checkSyntax`, remembered per URL text: its answer depends on the text and this instance's
   * settings alone, and a worker sends to the same few URLs over and over. Bounded.
   */
  #checkSyntaxOf(raw: string): { ok: true; url: URL } | ({ ok: false } & UrlRefusal) {
    let checked = this.#syntaxChecked.get(raw);
    if (checked === undefined) {
      checked = this.#checkSyntax(raw);
      if (this.#syntaxChecked.size >= SYNTAX_CHECKS_REMEMBERED_MAX) this.#syntaxChecked.clear();
      this.#syntaxChecked.set(raw, checked);
    }
    return checked;
  }

  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  #checkSyntax(raw: string): { ok: true; url: URL } | ({ ok: false } & UrlRefusal) {
    const invalid = (message: string) => ({ ok: false as const, reason: 'invalid' as const, message });
    if (raw.length > URL_LENGTH_MAX) return invalid(`The URL is longer than ${URL_LENGTH_MAX} characters.`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return invalid('The URL does not parse.');
    }
    const schemes = this.#allowHttp ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) return invalid('The URL must start with https://.');
    if (url.username !== '' || url.password !== '') return invalid('The URL must not contain a user name or password.');
    if (url.hostname === '') return invalid('The URL has no host.');
    if (this.#allowPrivate) return { ok: true, url };
    const addressClass = classifyAddress(url.hostname);
    if (addressClass !== undefined && addressClass !== 'public') {
      return { ok: false, reason: 'forbidden', message: `The URL names ${url.hostname}, a ${describeClass(url.hostname)} address.` };
    }
    if (addressClass === undefined && isForbiddenHostname(url.hostname)) {
      return {
        ok: false,
        reason: 'forbidden',
        message: `The URL's host ${url.hostname} is a local or internal name; use a public host name.`,
      };
    }
    return { ok: true, url };
  }

  async #resolve(hostname: string): Promise<readonly LookupAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`DNS lookup of ${hostname} took longer than ${DNS_TIMEOUT_MS} ms`)), DNS_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.#lookup(hostname), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The connection step: names are resolved here, every address is checked, and the socket is
   * opened to the checked address (the `lookup` hook of `net.connect`). An IP literal skips
   * `lookup`, so the connected address is checked once more before the socket is handed over; a
   * refused address never receives a byte of the request.
   */
  #connector(): buildConnector.connector {
    const tls = this.#trustedCa === undefined ? {} : { ca: this.#trustedCa };
    if (this.#allowPrivate) return buildConnector({ timeout: this.#timeoutMs, ...tls });
    const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
      this.#resolve(hostname).then(
        (addresses) => {
          const refused = addresses.find((entry) => classifyAddress(entry.address) !== 'public');
          if (refused !== undefined) {
            callback(
              new AddressRefusedError(`${hostname} resolves to ${refused.address}, a ${describeClass(refused.address)} address`),
              [],
            );
            return;
          }
          const usable = addresses.filter(
            (entry) => options.family === undefined || options.family === 0 || entry.family === options.family,
          );
          const first = usable[0];
          if (first === undefined) {
            callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), []);
            return;
          }
          if (options.all === true) callback(null, [...usable]);
          else callback(null, first.address, first.family);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), []),
      );
    };
    const connect = buildConnector({ timeout: this.#timeoutMs, lookup, ...tls });
    return (options, callback) => {
      connect(options, (error, socket) => {
        if (error !== null) {
          callback(error, null);
          return;
        }
        const address = socket.remoteAddress;
        if (address === undefined || classifyAddress(address) !== 'public') {
          socket.destroy();
          callback(new AddressRefusedError(`connected to ${address ?? 'an unknown address'}, which is not public`), null);
          return;
        }
        callback(null, socket);
      });
    };
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function describeClass(address: string): string {
  return (classifyAddress(address) ?? 'non-public').replace('_', '-');
}

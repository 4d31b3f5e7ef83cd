import { webCrypto } from './crypto.js';
import { SignatureVerificationError } from './errors.js';
import type { WebhookEvent } from './webhook-events.js';

/**
 * Webhook signature verification (docs/api.md section 6). Every delivery is signed twice:
 *
 * - `x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`: lower-case hex HMAC-SHA256,
 *   keyed with the whole secret string (`whsec_…`) as UTF-8, over `<t>.<raw body>` (Stripe's
 *   scheme); one `v1=` per live secret while a secret is being rotated.
 * - `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>[ v1,<base64>…]`: HMAC-SHA256
 *   keyed with the base64-decoded part after `whsec_`, over `<id>.<timestamp>.<raw body>`
 *   (Standard Webhooks).
 *
 * Given request headers, the `x-service-signature` scheme is checked when that header is present,
 * the Standard Webhooks one otherwise; given one string, it is the `x-service-signature` value.
 * HMACs come from Web Crypto, so the same code runs in browsers, edge runtimes and Node 18+, and
 * are compared in constant time.
 */

/** Request headers as Node (`req.headers`), Fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the signature's time may be from now; default 300 s (docs/api.md section 6). */
  readonly toleranceSeconds?: number;
  /** The time to check against; default now. */
  readonly now?: Date;
}

/** Bytes in an ArrayBuffer (never a SharedArrayBuffer), as Web Crypto takes them. */
type Bytes = Uint8Array<ArrayBuffer>;

const TOLERANCE_SECONDS_DEFAULT = 300;
const SECRET_PREFIX = 'whsec_';
const encoder = new TextEncoder();

/**
 * Checks that `rawBody` was signed by the service with `secret` (or with any of several secrets,
 * while you rotate), within the tolerance, and returns the event it carries. Throws
 * `SignatureVerificationError` otherwise: answer that delivery with 401.
 *
 * `rawBody` must be the body exactly as received (bytes or the undecoded text), never a
 * re-serialised JSON object: any change of whitespace or key order breaks the signature.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  signature: string | WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((value) => typeof value !== 'string' || value === '')) {
    throw new TypeError('secret must be the endpoint secret ("whsec_…"), or a non-empty list of them.');
  }
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const toleranceSeconds = options.toleranceSeconds ?? TOLERANCE_SECONDS_DEFAULT;
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);

  const serviceHeader = typeof signature === 'string' ? signature : header(signature, 'x-service-signature');
  const timestamp =
    serviceHeader !== undefined
      ? await verifyServiceSignature(serviceHeader, body, secrets)
      : await verifyStandardWebhooks(signature as WebhookHeaders, body, secrets);

  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new SignatureVerificationError(
      'timestamp_outside_tolerance',
      `The signature's time is ${nowSeconds - timestamp} s from now; at most ${toleranceSeconds} s is accepted.`,
    );
  }
  return parseEvent(body);
}

/** `t=…,v1=…[,v1=…]`; returns `t` once a `v1` matches. */
async function verifyServiceSignature(value: string, body: Uint8Array, secrets: readonly string[]): Promise<number> {
  let timestamp: number | undefined;
  const candidates: Bytes[] = [];
  for (const item of value.split(',')) {
    const separator = item.indexOf('=');
    const name = item.slice(0, separator).trim();
    const content = item.slice(separator + 1).trim();
    if (separator < 0) continue;
    if (name === 't' && /^\d{1,12}$/.test(content)) timestamp = Number(content);
    if (name === 'v1' && /^[0-9a-f]{64}$/.test(content)) candidates.push(hexBytes(content));
  }
  if (timestamp === undefined) throw new SignatureVerificationError('header_invalid', 'x-service-signature has no valid t=.');
  if (candidates.length === 0) throw new SignatureVerificationError('header_invalid', 'x-service-signature has no v1= signature.');
  const message = concat(encoder.encode(`${timestamp}.`), body);
  for (const secret of secrets) {
    const expected = await hmacSha256(encoder.encode(secret), message);
    if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return timestamp;
  }
  throw new SignatureVerificationError('signature_mismatch', 'No signature matches the body and the secret.');
}

/** `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>[ v1,<base64>…]`. */
async function verifyStandardWebhooks(headers: WebhookHeaders, body: Uint8Array, secrets: readonly string[]): Promise<number> {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestampText === undefined || signatures === undefined) {
    throw new SignatureVerificationError(
      'header_missing',
      'Neither x-service-signature nor webhook-id, webhook-timestamp and webhook-signature are present.',
    );
  }
  if (!/^\d{1,12}$/.test(timestampText)) throw new SignatureVerificationError('header_invalid', 'webhook-timestamp is not a Unix time.');
  const candidates: Bytes[] = [];
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',');
    if (version !== 'v1' || encoded === undefined) continue;
    const bytes = base64Bytes(encoded);
    if (bytes !== undefined) candidates.push(bytes);
  }
  if (candidates.length === 0) throw new SignatureVerificationError('header_invalid', 'webhook-signature has no v1, signature.');
  const message = concat(encoder.encode(`${id}.${timestampText}.`), body);
  for (const secret of secrets) {
    const key = base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
    if (key === undefined) throw new TypeError('The secret is not "whsec_" followed by base64.');
    const expected = await hmacSha256(key, message);
    if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return Number(timestampText);
  }
  throw new SignatureVerificationError('signature_mismatch', 'No signature matches the body and the secret.');
}

function parseEvent(body: Uint8Array): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new SignatureVerificationError('body_invalid', 'The signed body is not JSON.');
  }
  const candidate = event as Partial<Record<keyof WebhookEvent, unknown>> | null;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.id !== 'string' || typeof candidate.type !== 'string') {
    throw new SignatureVerificationError('body_invalid', 'The signed body is not an event.');
  }
  return event as WebhookEvent;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.join(name === 'webhook-signature' ? ' ' : ',');
}

async function hmacSha256(key: Bytes, message: Bytes): Promise<Bytes> {
  const { subtle } = await webCrypto();
  const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, message));
}

/** Equal length and bytes, in time that depends only on the length (which is public: 32 bytes). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let index = 0; index < a.length; index += 1) difference |= (a[index] ?? 0) ^ (b[index] ?? 0);
  return difference === 0;
}

function concat(a: Uint8Array, b: Uint8Array): Bytes {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}

function hexBytes(hex: string): Bytes {
  const bytes = new Uint8Array(hex.length / 2);
  for (let index = 0; index < bytes.length; index += 1) bytes[index] = Number.parseInt(hex.slice(index * 2, index * 2 + 2), 16);
  return bytes;
}

function base64Bytes(text: string): Bytes | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
}

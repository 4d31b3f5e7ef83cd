import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { canonicalAddress } from '../lib/client-address.js';
import { ApiError } from '../lib/errors.js';
import type { Principal } from '../lib/principal.js';

/**
 * Who is behind a request: the address and user agent that rate limits, log-in throttling, new
 * sessions and audit entries record. See docs/architecture.md ("End-user context").
 */
export interface RequestClient {
  readonly ip: string;
  readonly userAgent: string | undefined;
}

export const END_USER_IP_HEADER = 'x-end-user-ip';
export const END_USER_AGENT_HEADER = 'x-end-user-agent';
/** Longer user agents are cut, as the sessions table and the audit log keep them. */
export const USER_AGENT_LENGTH_MAX = 500;

/** The connection's own address (as `trustProxy` resolves it) and `User-Agent`. */
export function transportClient(request: FastifyRequest): RequestClient {
  const userAgent = headerValue(request.headers['user-agent']);
  return { ip: request.ip, userAgent: userAgent === undefined ? undefined : userAgentText(userAgent) };
}

/**
 * The end user a server-to-server request speaks for, from `X-End-User-IP` and `X-End-User-Agent`,
 * or undefined when the request names none. Only a secret key's holder (the calling application)
 * may name one: on a session token or a dashboard cookie the headers are ignored, since a browser
 * could otherwise choose the address it is throttled and recorded under. Each header stands alone:
 * the one not sent keeps the connection's value. A malformed address → 400 `parameter_invalid`.
 */
export function endUserClient(request: FastifyRequest, principal: Principal): RequestClient | undefined {
  if (principal.kind !== 'secret_key' || principal.via === 'dashboard') return undefined;
  const ipHeader = headerValue(request.headers[END_USER_IP_HEADER]);
  const agentHeader = headerValue(request.headers[END_USER_AGENT_HEADER]);
  if (ipHeader === undefined && agentHeader === undefined) return undefined;
  const transport = transportClient(request);
  return {
    ip: ipHeader === undefined ? transport.ip : canonicalIp(ipHeader),
    userAgent: agentHeader === undefined ? transport.userAgent : userAgentText(agentHeader),
  };
}

/**
 * A user agent as text: the header's bytes read as UTF-8, cut at `USER_AGENT_LENGTH_MAX`
 * characters. Node hands a header over one byte per character (latin1), so "Ünïcode" sent as UTF-8
 * arrives as "Ã\u009cnÃ¯code"; re-reading the bytes restores it. Bytes that are not UTF-8 keep
 * their latin1 reading, which is what HTTP/1.1 long defined header bytes to be (RFC 9110 section
 * 5.5): an agent is recorded, never refused.
 */
export function userAgentText(header: string): string {
  let text = header;
  // Only text of characters 0x80–0xFF came from bytes this way; wider ones were decoded already.
  if (/[\x80-\xff]/.test(header) && !/[\u0100-\uffff]/.test(header)) {
    const bytes = Buffer.from(header, 'latin1');
    if (isUtf8(bytes)) text = bytes.toString('utf8');
  }
  // Cutting between the two halves of a surrogate pair would leave half a character.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(USER_AGENT_LENGTH_MAX - 1)) ? USER_AGENT_LENGTH_MAX - 1 : USER_AGENT_LENGTH_MAX;
  return text.slice(0, end);
}

/**
 * The header's address in one spelling (`lib/client-address.ts`), so that `2001:DB8::1` and
 * `::ffff:192.0.2.1` count against the same throttle as `2001:db8::1` and `192.0.2.1`. Anything
 * but one address (a list, a range, a zone id) → 400 `parameter_invalid`.
 */
export function canonicalIp(text: string): string {
  const canonical = canonicalAddress(text);
  if (canonical !== undefined) return canonical;
  throw new ApiError(
    'parameter_invalid',
    'The X-End-User-IP header must be one IPv4 or IPv6 address, such as 203.0.113.7 or 2001:db8::1.',
    { param: 'X-End-User-IP' },
  );
}

/** A header's first value; a repeated custom header arrives joined with ", " and then fails the address check. */
function headerValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

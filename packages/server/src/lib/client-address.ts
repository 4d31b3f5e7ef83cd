import { isIP } from 'node:net';

/** Longer text is no address; checked before parsing, so a huge header costs nothing. */
const ADDRESS_LENGTH_MAX = 64;

/**
 * One spelling per address, or undefined when `text` is not one IPv4 or IPv6 address: IPv6 in its
 * canonical form (RFC 5952: lower case, zeros compressed), and an IPv4 address in IPv6 form
 * (`::ffff:192.0.2.1`) as the IPv4 address, so every spelling counts against the same limit.
 * Zone ids (`fe80::1%eth0`) name a local interface, never an end user, and are no address here.
 */
export function canonicalAddress(text: string): string | undefined {
  const value = text.trim();
  const family = value.length > ADDRESS_LENGTH_MAX ? 0 : isIP(value);
  if (family === 4) return value;
  if (family !== 6 || value.includes('%')) return undefined;
  // The URL parser writes IPv6 in canonical form, and turns a dotted IPv4 tail into two hextets.
  const canonical = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  return mappedIpv4(hextetsOf(canonical)) ?? canonical;
}

/**
 * The part of a client's address that a limit is keyed by: an IPv4 address whole, an IPv6
 * address's /64 (its first four hextets). One subscriber is routinely given a whole /64, so keying
 * by the full address would give a guesser 2^64 fresh limits. Text that is no address (a test's
 * made-up `remoteAddress`) is its own key; no address at all is the empty key.
 */
export function limitAddress(ip: string | undefined): string {
  if (ip === undefined) return '';
  const canonical = canonicalAddress(ip);
  if (canonical === undefined) return ip;
  if (isIP(canonical) === 4) return canonical;
  const prefix = hextetsOf(canonical)
    .slice(0, 4)
    .map((hextet) => hextet.toString(16))
    .join(':');
  return `${prefix}::/64`;
}

/** The eight 16-bit groups of an IPv6 address in canonical form (hexadecimal groups, at most one `::`). */
function hextetsOf(canonical: string): number[] {
  const [head = '', tail] = canonical.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((hextet) => Number.parseInt(hextet, 16)));
  if (tail === undefined) return groups(head);
  const [before, after] = [groups(head), groups(tail)];
  return [...before, ...Array.from({ length: 8 - before.length - after.length }, () => 0), ...after];
}

/** `::ffff:a.b.c.d` (an IPv4-mapped IPv6 address) as `a.b.c.d`; undefined for any other address. */
function mappedIpv4(hextets: readonly number[]): string | undefined {
  const isMapped = hextets.length === 8 && hextets.slice(0, 5).every((hextet) => hextet === 0) && hextets[5] === 0xffff;
  if (!isMapped) return undefined;
  const [high = 0, low = 0] = hextets.slice(6);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses an outbound request to a user-supplied URL may reach. Part of the outbound
 * HTTP module (`outbound-http.ts`): a webhook URL that names or resolves to anything but a public
 * unicast address could make the service attack its own network (SSRF), so everything that is not
 * globally routable is refused, in every spelling an address can take.
 *
 * Spellings: the WHATWG URL parser already turns `127.1`, `0x7f000001`, `2130706433` and
 * `017700000001` into `127.0.0.1` and IPv6 into its short form; what reaches this file is a dotted
 * quad or an IPv6 address. IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside them.
 */
export type AddressClass =
  'public' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'cgnat' | 'multicast' | 'metadata' | 'reserved';

interface Ipv4Range {
  readonly base: number;
  readonly prefixBits: number;
  readonly class: Exclude<AddressClass, 'public'>;
}

/** Cloud metadata services, named first so that a refusal says what the address is. */
const METADATA_IPV4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192']);
/** fd00:ec2::254, the AWS instance metadata service over IPv6. */
const METADATA_IPV6_GROUPS = [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254];

/** Every IPv4 range that is not globally reachable (IANA special-purpose registry, RFC 6890). */
const IPV4_RANGES: readonly Ipv4Range[] = [
  range('0.0.0.0', 8, 'unspecified'),
  range('10.0.0.0', 8, 'private'),
  range('100.64.0.0', 10, 'cgnat'),
  range('127.0.0.0', 8, 'loopback'),
  range('169.254.0.0', 16, 'link_local'),
  range('172.16.0.0', 12, 'private'),
  range('192.0.0.0', 24, 'reserved'),
  range('192.0.2.0', 24, 'reserved'),
  range('192.88.99.0', 24, 'reserved'),
  range('192.168.0.0', 16, 'private'),
  range('198.18.0.0', 15, 'reserved'),
  range('198.51.100.0', 24, 'reserved'),
  range('203.0.113.0', 24, 'reserved'),
  range('224.0.0.0', 4, 'multicast'),
  range('240.0.0.0', 4, 'reserved'),
];

function range(base: string, prefixBits: number, addressClass: Exclude<AddressClass, 'public'>): Ipv4Range {
  const value = ipv4ToNumber(base);
  if (value === undefined) throw new Error(`bad range base ${base}`);
  return { base: value, prefixBits, class: addressClass };
}

function ipv4ToNumber(address: string): number | undefined {
  if (!isIPv4(address)) return undefined;
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function classifyIpv4Number(value: number): AddressClass {
  for (const candidate of IPV4_RANGES) {
    const size = 2 ** (32 - candidate.prefixBits);
    if (Math.floor(value / size) === Math.floor(candidate.base / size)) return candidate.class;
  }
  return 'public';
}

function numberToIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const withoutZone = address.split('%')[0] ?? '';
  if (!isIPv6(withoutZone)) return undefined;
  let text = withoutZone.toLowerCase();
  // A dotted-quad tail (`::ffff:127.0.0.1`) becomes two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const value = ipv4ToNumber(tail);
    if (value === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = rest === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  if (groups.length !== 8) return undefined;
  return groups.map((group) => Number.parseInt(group, 16));
}

function startsWith(groups: readonly number[], prefix: readonly number[], prefixBits: number): boolean {
  for (let bit = 0; bit < prefixBits; bit += 16) {
    const bits = Math.min(16, prefixBits - bit);
    const mask = (0xffff << (16 - bits)) & 0xffff;
    const index = bit / 16;
    if (((groups[index] ?? 0) & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

/** The class of the IPv4 address carried in two 16-bit groups of an IPv6 address. */
function classifyEmbeddedIpv4(high: number | undefined, low: number | undefined): AddressClass {
  const value = ((high ?? 0) * 65536 + (low ?? 0)) >>> 0;
  return METADATA_IPV4.has(numberToIpv4(value)) ? 'metadata' : classifyIpv4Number(value);
}

function classifyIpv6(groups: readonly number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const firstSixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstSixZero && g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
  if (firstSixZero && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // IPv4-mapped ::ffff:0:0/96: the socket talks IPv4 to the address inside.
  if (firstSixZero && g5 === 0xffff) return classifyEmbeddedIpv4(g6, g7);
  // IPv4-compatible ::/96 (deprecated) and IPv4-translated ::ffff:0:0:0/96: never legitimate targets.
  if (firstSixZero || (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff)) return 'reserved';
  // NAT64 64:ff9b::/96 reaches the IPv4 address inside; 64:ff9b:1::/48 is for local use only.
  if (startsWith(groups, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return classifyEmbeddedIpv4(g6, g7);
  if (startsWith(groups, [0x64, 0xff9b, 1], 48)) return 'private';
  // 6to4 2002::/16 carries an IPv4 address in bits 16 to 47.
  if (g0 === 0x2002) return classifyEmbeddedIpv4(g1, g2);
  if (startsWith(groups, [0xfe80], 10)) return 'link_local';
  if (startsWith(groups, [0xfec0], 10)) return 'private';
  if (startsWith(groups, [0xfc00], 7)) return 'private';
  if (startsWith(groups, [0xff00], 8)) return 'multicast';
  // Documentation (2001:db8::/32, 3fff::/20), IETF protocol assignments including Teredo
  // (2001::/23), discard-only (100::/64).
  if (startsWith(groups, [0x2001, 0x0db8], 32) || startsWith(groups, [0x3fff], 20)) return 'reserved';
  if (startsWith(groups, [0x2001, 0], 23)) return 'reserved';
  // Only global unicast 2000::/3 is routable on the internet.
  if (!startsWith(groups, [0x2000], 3)) return 'reserved';
  return 'public';
}

/**
 * The class of an IP address (IPv4 dotted quad or IPv6, brackets and zone id allowed), or
 * `undefined` when `address` is not an IP address at all.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const ipv4 = ipv4ToNumber(bare);
  if (ipv4 !== undefined) return METADATA_IPV4.has(bare) ? 'metadata' : classifyIpv4Number(ipv4);
  const groups = ipv6Groups(bare);
  if (groups === undefined) return undefined;
  if (groups.every((group, index) => group === METADATA_IPV6_GROUPS[index])) return 'metadata';
  return classifyIpv6(groups);
}

/** True for an address an outbound request may connect to. Anything that is not an IP is refused. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === 'public';
}

/**
 * Host names refused without asking DNS: they name the service's own host or network whatever a
 * resolver says. A name without a dot is completed by the resolver's search domains, which name
 * internal hosts (`metadata`, `kubernetes`), so it is refused too.
 */
export function isForbiddenHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  if (name === '' || !name.includes('.')) return true;
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name.endsWith('.local') ||
    name.endsWith('.internal') ||
    name.endsWith('.home.arpa') ||
    name.endsWith('.in-addr.arpa') ||
    name.endsWith('.ip6.arpa')
  );
}

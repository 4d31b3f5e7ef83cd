import { describe, expect, it } from 'vitest';
import { canonicalAddress, limitAddress } from './client-address.js';

describe('canonicalAddress', () => {
  it('writes IPv6 in one spelling and an IPv4-mapped address as IPv4', () => {
    expect(canonicalAddress('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalAddress(' 2001:db8::1 ')).toBe('2001:db8::1');
    expect(canonicalAddress('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(canonicalAddress('::FFFF:c000:0201')).toBe('192.0.2.1');
    expect(canonicalAddress('192.0.2.1')).toBe('192.0.2.1');
    // The IPv4-compatible and NAT64 forms are other addresses, not IPv4 ones.
    expect(canonicalAddress('::192.0.2.1')).toBe('::c000:201');
    expect(canonicalAddress('64:ff9b::192.0.2.1')).toBe('64:ff9b::c000:201');
  });

  it('answers undefined for anything but one address', () => {
    for (const text of ['', 'localhost', '192.0.2.1, 192.0.2.2', '2001:db8::/64', 'fe80::1%eth0', `${'0:'.repeat(40)}1`])
      expect(canonicalAddress(text), text).toBeUndefined();
  });
});

describe('limitAddress', () => {
  it('keys an IPv6 address by its /64, whatever the spelling', () => {
    expect(limitAddress('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(limitAddress('2001:0DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(limitAddress('2001:db8:1:2::')).toBe('2001:db8:1:2::/64');
    expect(limitAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(limitAddress('::1')).toBe('0:0:0:0::/64');
    expect(limitAddress('fe80::1:2:3:4')).toBe('fe80:0:0:0::/64');
  });

  it('puts two addresses of one /64 under one key, and of two /64s under two', () => {
    expect(limitAddress('2001:db8:aa:bb::1')).toBe(limitAddress('2001:db8:aa:bb:ffff:ffff:ffff:ffff'));
    expect(limitAddress('2001:db8:aa:bb::1')).not.toBe(limitAddress('2001:db8:aa:bc::1'));
  });

  it('keys an IPv4 address, and an IPv4-mapped IPv6 one, by the whole IPv4 address', () => {
    expect(limitAddress('198.51.100.7')).toBe('198.51.100.7');
    expect(limitAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(limitAddress('::ffff:c633:6407')).toBe('198.51.100.7');
    expect(limitAddress('198.51.100.7')).not.toBe(limitAddress('198.51.100.8'));
  });

  it('keeps text that is no address as it is, and no address as the empty key', () => {
    expect(limitAddress('not-an-address')).toBe('not-an-address');
    expect(limitAddress(undefined)).toBe('');
  });
});

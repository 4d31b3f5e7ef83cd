import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, hotp, matchingStep, otpauthUrl, timeStep, totpCode } from './totp.js';

// RFC 6238 appendix B: the seeds are ASCII "1234567890" repeated to the hash's key length.
const SEEDS = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};
const VECTORS: ReadonlyArray<{ seconds: number; sha1: string; sha256: string; sha512: string }> = [
  { seconds: 59, sha1: '94287082', sha256: '46119246', sha512: '90693936' },
  { seconds: 1111111109, sha1: '07081804', sha256: '68084774', sha512: '25091201' },
  { seconds: 1111111111, sha1: '14050471', sha256: '67062674', sha512: '99943326' },
  { seconds: 1234567890, sha1: '89005924', sha256: '91819424', sha512: '93441116' },
  { seconds: 2000000000, sha1: '69279037', sha256: '90698825', sha512: '38618901' },
  { seconds: 20000000000, sha1: '65353130', sha256: '77737706', sha512: '47863826' },
];

describe('TOTP (RFC 6238)', () => {
  for (const vector of VECTORS) {
    it(`matches the RFC 6238 test vectors at T=${vector.seconds}`, () => {
      const step = timeStep(new Date(vector.seconds * 1000));
      for (const algorithm of ['sha1', 'sha256', 'sha512'] as const) {
        expect(hotp(SEEDS[algorithm], step, { algorithm, digits: 8 })).toBe(vector[algorithm]);
      }
      // The service's 6 digits are the last 6 of the same truncation.
      expect(totpCode(base32Encode(SEEDS.sha1), step)).toBe(vector.sha1.slice(2));
    });
  }

  it('matches the RFC 4226 HOTP test vectors', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, counter) => hotp(SEEDS.sha1, counter))).toEqual(expected);
  });

  it('round-trips base32 and decodes the RFC 4648 vectors', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI======').toString()).toBe('foobar');
    expect(base32Decode('mzxw6ytb').toString()).toBe('fooba');
    expect(() => base32Decode('MZ1')).toThrow();
  });

  it('accepts the codes of the step before, now and after, and no other', () => {
    const secret = base32Encode(SEEDS.sha1);
    const now = new Date(1_700_000_000_000);
    const step = timeStep(now);
    expect(matchingStep(secret, totpCode(secret, step), now)).toBe(step);
    expect(matchingStep(secret, totpCode(secret, step - 1), now)).toBe(step - 1);
    expect(matchingStep(secret, totpCode(secret, step + 1), now)).toBe(step + 1);
    expect(matchingStep(secret, totpCode(secret, step - 2), now)).toBeUndefined();
    expect(matchingStep(secret, totpCode(secret, step + 2), now)).toBeUndefined();
    expect(matchingStep(secret, '12345', now)).toBeUndefined();
    expect(matchingStep(secret, '１２３４５６', now)).toBeUndefined();
  });

  it('writes the otpauth URI authenticator apps read', () => {
    const text = otpauthUrl({ secret: 'JBSWY3DPEHPK3PXP', issuer: 'Acme Co', account: 'ada@example.com' });
    expect(text.startsWith('otpauth://totp/Acme%20Co:ada%40example.com?')).toBe(true);
    const url = new URL(text);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      secret: 'JBSWY3DPEHPK3PXP',
      issuer: 'Acme Co',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });
});

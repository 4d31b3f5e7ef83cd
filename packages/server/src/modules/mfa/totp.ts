import { createHmac, randomBytes } from 'node:crypto';

/**
 * Time-based one-time passwords, RFC 6238 over RFC 4226: HMAC-SHA-1, 6 digits, 30-second steps,
 * a code of the step before or after accepted for clock drift. The secret is 20 random bytes
 * (the HMAC-SHA-1 block's recommended size), shown to the user in base32 (RFC 4648, no padding),
 * the form authenticator apps read.
 */

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now whose code is accepted. */
export const TOTP_DRIFT_STEPS = 1;
const SECRET_BYTES = 20;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const TOTP_CODE_PATTERN = /^\d{6}$/;

export function newTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let output = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      output += BASE32_ALPHABET.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) output += BASE32_ALPHABET.charAt((value << (5 - bits)) & 31);
  return output;
}

export function base32Decode(text: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const character of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32_ALPHABET.indexOf(character);
    if (index < 0) throw new Error('not a base32 string');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** The 30-second step a time falls in: Unix seconds / 30, rounded down. */
export function timeStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_STEP_SECONDS);
}

/** RFC 4226 HOTP of a counter, with the hash and length RFC 6238's test vectors also use. */
export function hotp(
  key: Uint8Array,
  counter: number,
  options: { algorithm?: 'sha1' | 'sha256' | 'sha512'; digits?: number } = {},
): string {
  const digits = options.digits ?? TOTP_DIGITS;
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(options.algorithm ?? 'sha1', key)
    .update(message)
    .digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0xf;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The code of a base32 secret at a time step. */
export function totpCode(secret: string, step: number): string {
  return hotp(base32Decode(secret), step);
}

/**
 * The step whose code `code` is, among now's and its neighbours, or undefined. The comparison
 * looks at every candidate step, so the time taken does not tell which one matched.
 */
export function matchingStep(secret: string, code: string, now: Date): number | undefined {
  if (!TOTP_CODE_PATTERN.test(code)) return undefined;
  const key = base32Decode(secret);
  const current = timeStep(now);
  let matched: number | undefined;
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step += 1) {
    if (hotp(key, step) === code && matched === undefined) matched = step;
  }
  return matched;
}

/** The `otpauth://` URI authenticator apps scan as a QR code (Google Authenticator's key URI format). */
export function otpauthUrl(input: { secret: string; issuer: string; account: string }): string {
  const label = `${encodeURIComponent(input.issuer)}:${encodeURIComponent(input.account)}`;
  const query = new URLSearchParams({
    secret: input.secret,
    issuer: input.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}

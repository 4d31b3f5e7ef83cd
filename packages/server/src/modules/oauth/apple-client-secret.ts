import { createPrivateKey, type KeyObject, sign } from 'node:crypto';

/**
 * Apple's client secret: not a fixed string but an ES256 JWT the client makes from its team id,
 * key id and the P-256 private key Apple issued ("Sign in with Apple", "Creating a client
 * secret"). It is made fresh for each code exchange and lives 5 minutes (Apple allows up to six
 * months); nothing about it is stored.
 */
export const APPLE_CLIENT_SECRET_TTL_SECONDS = 300;

export interface AppleSecretInput {
  readonly teamId: string;
  readonly keyId: string;
  /** PEM (PKCS #8) of the P-256 key, as Apple's `.p8` file holds it. */
  readonly privateKey: string;
  /** The Services ID, Apple's client id: the JWT's `sub`. */
  readonly clientId: string;
  /** `https://appleid.apple.com`, or the issuer that stands in for it. */
  readonly audience: string;
  readonly now: Date;
}

/** The key, when `pem` is a P-256 private key; undefined otherwise. */
export function parseApplePrivateKey(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return undefined;
    return key;
  } catch {
    return undefined;
  }
}

export function appleClientSecret(input: AppleSecretInput): string {
  const key = parseApplePrivateKey(input.privateKey);
  if (key === undefined) throw new Error('the Apple private key is not a P-256 key');
  const issuedAt = Math.floor(input.now.getTime() / 1000);
  const header = { alg: 'ES256', kid: input.keyId, typ: 'JWT' };
  const claims = {
    iss: input.teamId,
    iat: issuedAt,
    exp: issuedAt + APPLE_CLIENT_SECRET_TTL_SECONDS,
    aud: input.audience,
    sub: input.clientId,
  };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(claims)}`;
  // JOSE wants the raw r||s form of the signature, not DER.
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

function base64UrlJson(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

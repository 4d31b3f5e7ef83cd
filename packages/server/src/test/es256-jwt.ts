import { type KeyObject, sign, verify } from 'node:crypto';

/** ES256 JWTs signed and checked by hand, for identity provider stand-ins (oauth-providers.ts). */

export function signJwt(claims: object, key: KeyObject, header: { kid: string; alg?: 'ES256' }): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg: 'ES256', typ: 'JWT', ...header })}.${encode(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The header and claims of an ES256 JWT whose signature `publicKey` verifies; undefined otherwise. */
export function verifyEs256Jwt(
  token: string,
  publicKey: KeyObject,
): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const [header, claims, signature] = token.split('.');
  if (header === undefined || claims === undefined || signature === undefined) return undefined;
  const ok = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!ok) return undefined;
  const parse = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: parse(header), claims: parse(claims) };
}

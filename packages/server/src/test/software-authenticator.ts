import { createHash, createSign, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import type { CreationOptions, RequestOptions } from '../modules/passkeys/passkeys.testing.js';

/**
 * A WebAuthn authenticator in software, for the tests that check every refusal on both dialects
 * without a browser: it answers creation and request options as a platform authenticator with
 * attestation `none` does (ES256 keys, the authenticator data and CBOR laid out per WebAuthn
 * Level 3), and lets a test bend what a real one never would (origin, rp id, user verification,
 * counter). The real ceremonies are tested in headless Chromium (passkeys.browser.test.ts).
 */

export interface Bend {
  /** The origin the client data names; the authenticator's own by default. */
  readonly origin?: string;
  /** The rp id whose hash the authenticator data carries. */
  readonly rpId?: string;
  /** False leaves the user-verified flag off. */
  readonly userVerified?: boolean;
  /** The challenge the client data carries instead of the options'. */
  readonly challenge?: string;
  /** Registration: this credential id (base64url) for the new key instead of a random one. */
  readonly credentialId?: string;
}

interface StoredCredential {
  readonly privateKey: KeyObject;
  readonly userHandle: string;
  signCount: number;
}

export class SoftwareAuthenticator {
  readonly origin: string;
  /** Counter step per signature; 0 makes an authenticator without a counter (as synced passkeys are). */
  readonly counterStep: number;
  readonly credentials = new Map<string, StoredCredential>();

  constructor(options: { origin: string; counterStep?: number }) {
    this.origin = options.origin;
    this.counterStep = options.counterStep ?? 1;
  }

  /** The answer of `navigator.credentials.create()`, as `PublicKeyCredential.toJSON()` gives it. */
  register(options: CreationOptions, bend: Bend = {}) {
    const rpId = bend.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const credentialId = bend.credentialId === undefined ? randomBytes(16) : Buffer.from(bend.credentialId, 'base64url');
    const id = credentialId.toString('base64url');
    const stored: StoredCredential = { privateKey, userHandle: options.user.id, signCount: this.counterStep };
    this.credentials.set(id, stored);
    const coseKey = cbor(
      new Map<number, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    );
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    const authenticatorData = Buffer.concat([
      authenticatorHeader(rpId, bend.userVerified ?? true, stored.signCount, true),
      Buffer.alloc(16),
      length,
      credentialId,
      coseKey,
    ]);
    const attestationObject = cbor(
      new Map<string, CborValue>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authenticatorData],
      ]),
    );
    return {
      id,
      rawId: id,
      type: 'public-key' as const,
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.#clientData('webauthn.create', bend.challenge ?? options.challenge, bend.origin),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** The answer of `navigator.credentials.get()` with one of this authenticator's credentials. */
  authenticate(options: RequestOptions, credentialId: string, bend: Bend & { signCount?: number } = {}) {
    const stored = this.credentials.get(credentialId);
    if (stored === undefined) throw new Error(`the authenticator has no credential ${credentialId}`);
    stored.signCount = bend.signCount ?? stored.signCount + this.counterStep;
    const rpId = bend.rpId ?? options.rpId ?? new URL(this.origin).hostname;
    const authenticatorData = authenticatorHeader(rpId, bend.userVerified ?? true, stored.signCount, false);
    const clientDataJSON = this.#clientData('webauthn.get', bend.challenge ?? options.challenge, bend.origin);
    const signer = createSign('sha256');
    signer.update(Buffer.concat([authenticatorData, createHash('sha256').update(Buffer.from(clientDataJSON, 'base64url')).digest()]));
    return {
      id: credentialId,
      rawId: credentialId,
      type: 'public-key' as const,
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON,
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signer.sign(stored.privateKey).toString('base64url'),
        userHandle: stored.userHandle,
      },
    };
  }

  #clientData(type: string, challenge: string, origin: string | undefined): string {
    return Buffer.from(JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false })).toString('base64url');
  }
}

/** rpIdHash, flags (user present, user verified, attested credential data) and the 32-bit counter. */
function authenticatorHeader(rpId: string, userVerified: boolean, signCount: number, attested: boolean): Buffer {
  const flags = 0x01 | (userVerified ? 0x04 : 0) | (attested ? 0x40 : 0);
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(signCount);
  return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), counter]);
}

type CborValue = number | string | Buffer | Map<number | string, CborValue>;

/** The CBOR subset WebAuthn needs: small integers, text, byte strings and maps, in definite lengths. */
function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  const parts = [head(5, value.size)];
  for (const [key, item] of value) parts.push(cbor(key), cbor(item));
  return Buffer.concat(parts);
}

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  const bytes = Buffer.alloc(3);
  bytes[0] = (major << 5) | 25;
  bytes.writeUInt16BE(length, 1);
  return bytes;
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encryption at rest for secrets the service must read back (OAuth and SSO client secrets, Apple
 * private keys, PKCE verifiers, webhook signing secrets, idempotent responses): AES-256-GCM with a
 * random 96-bit IV per value, under a keyring (docs/adr/0015-secrets-at-rest.md).
 *
 * - The first key of the ring seals; every key of the ring opens. A sealed value names the id of
 *   the key that sealed it: `v2.<key id>.<iv>.<tag>.<ciphertext>`, the last three base64url.
 * - Values sealed before keyrings existed, `v1.<iv>.<tag>.<ciphertext>`, name no key: each key of
 *   the ring is tried (the GCM tag tells the right one).
 * - The associated data binds a ciphertext to the row it belongs to, so a ciphertext copied into
 *   another row (or another project's) does not open.
 */
const LEGACY_VERSION = 'v1';
const VERSION = 'v2';
const KEY_BYTES = 32;
const IV_BYTES = 12;
/** What a key id may be: it sits between dots in a sealed value and between `,` and `:` in the variable. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** The id of the one key given by `SECRETS_ENCRYPTION_KEY` or kept in `DATA_DIR/secrets.key`. */
export const SINGLE_KEY_ID = 'default';
/** The development key's file under DATA_DIR, created on first use when no key is configured. */
export const DEVELOPMENT_KEY_FILE = 'secrets.key';

export interface KeyringKey {
  readonly id: string;
  readonly key: Buffer;
}

export class SecretBox {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** The id of the key that seals. */
  readonly primaryKeyId: string;

  constructor(keys: readonly KeyringKey[]) {
    const [primary] = keys;
    if (primary === undefined) throw new Error('a keyring holds at least one key');
    const byId = new Map<string, Buffer>();
    for (const { id, key } of keys) {
      if (!KEY_ID_PATTERN.test(id)) throw new Error(`a key id is 1 to 32 letters, digits, "_" or "-", got "${id}"`);
      if (key.length !== KEY_BYTES) throw new Error(`a secret box key is ${KEY_BYTES} bytes, got ${key.length} for "${id}"`);
      if (byId.has(id)) throw new Error(`the key id "${id}" appears twice`);
      byId.set(id, Buffer.from(key));
    }
    this.#keys = byId;
    this.primaryKeyId = primary.id;
  }

  /** The key ids, the sealing one first. */
  get keyIds(): readonly string[] {
    return [...this.#keys.keys()];
  }

  seal(plaintext: string, associatedData: string): string {
    const key = this.#keys.get(this.primaryKeyId);
    if (key === undefined) throw new Error('the sealing key is missing from its own keyring');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      this.primaryKeyId,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ciphertext.toString('base64url'),
    ].join('.');
  }

  /** The plaintext; throws when no key of the ring sealed the value with this associated data. */
  open(sealed: string, associatedData: string): string {
    const parts = sealed.split('.');
    if (parts[0] === VERSION && parts.length === 5) {
      const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
      const key = this.#keys.get(keyId);
      if (key === undefined) throw new Error(`sealed under key "${keyId}", which is not in the keyring`);
      return decrypt(key, iv, tag, ciphertext, associatedData);
    }
    if (parts[0] === LEGACY_VERSION && parts.length === 4) {
      const [, iv, tag, ciphertext] = parts as [string, string, string, string];
      for (const key of this.#keys.values()) {
        try {
          return decrypt(key, iv, tag, ciphertext, associatedData);
        } catch {
          // Another key of the ring, or none: the tag decides.
        }
      }
      throw new Error('no key of the keyring opens this value');
    }
    throw new Error('not a sealed secret');
  }

  /** True when the value is sealed under the key that seals now (nothing for rotation to do). */
  isCurrent(sealed: string): boolean {
    return sealedKeyId(sealed) === this.primaryKeyId;
  }
}

/** Whether a stored value is sealed at all (rather than plain text from before sealing). */
export function isSealed(value: string): boolean {
  return value.startsWith(`${VERSION}.`) || value.startsWith(`${LEGACY_VERSION}.`);
}

/** The key id a sealed value names; undefined for `v1.` values (they name none) and plain text. */
export function sealedKeyId(sealed: string): string | undefined {
  if (!sealed.startsWith(`${VERSION}.`)) return undefined;
  return sealed.split('.', 2)[1];
}

function decrypt(key: Buffer, iv: string, tag: string, ciphertext: string, associatedData: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * The keyring from the configuration (`SECRETS_ENCRYPTION_KEYS`, or `SECRETS_ENCRYPTION_KEY` as a
 * ring of one named `default`), or, outside production, the one key in `DATA_DIR/secrets.key`:
 * generated on first use (mode 0600) and read back afterwards, so a development database keeps
 * working across restarts. Two processes starting at once agree: the file is created exclusively
 * and the loser reads the winner's key. Built once, in the composition root (main.ts).
 */
export function secretBoxFromConfig(options: {
  readonly keys: readonly { readonly id: string; readonly keyHex: string }[] | undefined;
  readonly dataDir: string;
}): SecretBox {
  if (options.keys !== undefined) return new SecretBox(options.keys.map(({ id, keyHex }) => ({ id, key: Buffer.from(keyHex, 'hex') })));
  return new SecretBox([{ id: SINGLE_KEY_ID, key: developmentKey(options.dataDir) }]);
}

function developmentKey(dataDir: string): Buffer {
  const file = join(dataDir, DEVELOPMENT_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  // Written whole to a private file first, then linked into place: link() fails if the name
  // exists, so nobody ever reads a half-written key.
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} does not hold a 64-hex-digit key; delete it or set SECRETS_ENCRYPTION_KEYS`);
  return Buffer.from(text, 'hex');
}

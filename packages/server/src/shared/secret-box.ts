import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encryption at rest for secrets the service must read back (OAuth client secrets, Apple private
 * keys, PKCE verifiers): AES-256-GCM with a random 96-bit IV per value. The associated data binds
 * a ciphertext to the row it belongs to, so a ciphertext copied into another project's row does not
 * decrypt. Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. See docs/adr/0008-oauth.md.
 */
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
/** The development key's file under DATA_DIR, created on first use when SECRETS_ENCRYPTION_KEY is unset. */
export const DEVELOPMENT_KEY_FILE = 'secrets.key';

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a secret box key is ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plaintext; throws when the value was not sealed with this key and associated data. */
  open(sealed: string, associatedData: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('not a sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * The key from SECRETS_ENCRYPTION_KEY, or, outside production, the one in `DATA_DIR/secrets.key`:
 * generated on first use (mode 0600) and read back afterwards, so a development database keeps
 * working across restarts. Two processes starting at once agree: the file is created exclusively
 * and the loser reads the winner's key.
 */
export function secretBoxFromConfig(options: { keyHex: string | undefined; dataDir: string }): SecretBox {
  if (options.keyHex !== undefined) return new SecretBox(Buffer.from(options.keyHex, 'hex'));
  const file = join(options.dataDir, DEVELOPMENT_KEY_FILE);
  mkdirSync(options.dataDir, { recursive: true });
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
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} does not hold a 64-hex-digit key; delete it or set SECRETS_ENCRYPTION_KEY`);
  return new SecretBox(Buffer.from(text, 'hex'));
}

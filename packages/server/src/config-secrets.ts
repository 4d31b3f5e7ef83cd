import { ConfigError, type Env, type NodeEnv, nonEmpty } from './config-parsing.js';
import { KEY_ID_PATTERN, SINGLE_KEY_ID } from './lib/secret-box.js';

/** The keyring that seals secrets at rest (lib/secret-box.ts, docs/adr/0015-secrets-at-rest.md). */
export interface SecretsConfig {
  /**
   * `SECRETS_ENCRYPTION_KEYS` (`id:key` pairs, the first seals, all open), or
   * `SECRETS_ENCRYPTION_KEY` (one key, the id `default`); each key 32 bytes, kept as hex text (a
   * frozen config cannot hold a Buffer: typed arrays refuse Object.freeze). Required in production;
   * unset elsewhere → a key generated once and kept in `DATA_DIR/secrets.key`.
   */
  readonly keys: readonly { readonly id: string; readonly keyHex: string }[] | undefined;
}

/**
 * The sealing keyring: `SECRETS_ENCRYPTION_KEYS=id:key,id:key` (the first seals, all open) or
 * `SECRETS_ENCRYPTION_KEY=key` (a ring of one, id `default`); not both. Ids are 1 to 32 letters,
 * digits, `_` or `-`, each once. Required in production.
 */
export function secretsConfig(env: Env, nodeEnv: NodeEnv): SecretsConfig {
  const list = nonEmpty(env['SECRETS_ENCRYPTION_KEYS']);
  const single = nonEmpty(env['SECRETS_ENCRYPTION_KEY']);
  if (list !== undefined && single !== undefined) {
    throw new ConfigError(
      'SECRETS_ENCRYPTION_KEYS',
      'and SECRETS_ENCRYPTION_KEY are both set; keep one (SECRETS_ENCRYPTION_KEY=K is SECRETS_ENCRYPTION_KEYS=default:K)',
    );
  }
  if (single !== undefined) {
    return { keys: [{ id: SINGLE_KEY_ID, keyHex: encryptionKey('SECRETS_ENCRYPTION_KEY', single).toString('hex') }] };
  }
  if (list === undefined) {
    if (nodeEnv === 'production') {
      throw new ConfigError(
        'SECRETS_ENCRYPTION_KEYS',
        'is required when NODE_ENV=production (or SECRETS_ENCRYPTION_KEY): id:key pairs, each key 32 random bytes in base64 (e.g. `k1:$(openssl rand -base64 32)`)',
      );
    }
    return { keys: undefined };
  }
  const keys: { id: string; keyHex: string }[] = [];
  for (const [index, pair] of list.split(',').entries()) {
    const separator = pair.indexOf(':');
    const id = separator === -1 ? '' : pair.slice(0, separator).trim();
    const name = `SECRETS_ENCRYPTION_KEYS (entry ${index + 1})`;
    if (separator === -1) throw new ConfigError(name, 'must be id:key, e.g. k1:<32 bytes in base64>');
    if (!KEY_ID_PATTERN.test(id)) throw new ConfigError(name, `the key id must be 1 to 32 letters, digits, "_" or "-", got "${id}"`);
    if (keys.some((key) => key.id === id)) throw new ConfigError(name, `the key id "${id}" appears twice`);
    keys.push({ id, keyHex: encryptionKey(`${name} "${id}"`, pair.slice(separator + 1).trim()).toString('hex') });
  }
  return { keys };
}

/** 32 bytes, written as 64 hex digits or as base64 (standard or URL-safe, padding optional). */
function encryptionKey(name: string, raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(
      name,
      'the key must be 32 bytes written as base64 or as 64 hex digits (e.g. the output of `openssl rand -base64 32`)',
    );
  }
  return key;
}

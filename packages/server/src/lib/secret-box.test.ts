import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { WebhookSecrets } from '../modules/webhooks/webhooks.secrets.js';
import { isSealed, SecretBox, sealedKeyId } from './secret-box.js';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);

describe('SecretBox keyring (docs/adr/0015-secrets-at-rest.md)', () => {
  it('seals under the first key, naming it, and opens with any key of the ring', () => {
    const ab = new SecretBox([
      { id: 'a', key: KEY_A },
      { id: 'b', key: KEY_B },
    ]);
    const sealed = ab.seal('whsec_x', 'row:1');
    expect(sealed).toMatch(/^v2\.a\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealedKeyId(sealed)).toBe('a');
    expect(ab.isCurrent(sealed)).toBe(true);
    const ba = new SecretBox([
      { id: 'b', key: KEY_B },
      { id: 'a', key: KEY_A },
    ]);
    expect(ba.open(sealed, 'row:1')).toBe('whsec_x');
    expect(ba.isCurrent(sealed)).toBe(false);
    // Bound to its row, and to its key id.
    expect(() => ba.open(sealed, 'row:2')).toThrow();
    expect(() => new SecretBox([{ id: 'b', key: KEY_B }]).open(sealed, 'row:1')).toThrow(/not in the keyring/);
  });

  it('opens values sealed before keyrings (v1, no key id) with whichever key of the ring sealed them', () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', KEY_A, iv);
    cipher.setAAD(Buffer.from('row:1'));
    const ciphertext = Buffer.concat([cipher.update('legacy', 'utf8'), cipher.final()]);
    const legacy = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    expect(isSealed(legacy)).toBe(true);
    expect(sealedKeyId(legacy)).toBeUndefined();
    const ring = new SecretBox([
      { id: 'b', key: KEY_B },
      { id: 'a', key: KEY_A },
    ]);
    expect(ring.open(legacy, 'row:1')).toBe('legacy');
    expect(ring.isCurrent(legacy)).toBe(false);
    expect(() => new SecretBox([{ id: 'b', key: KEY_B }]).open(legacy, 'row:1')).toThrow();
  });

  it('refuses a ring without keys, a bad id, a short key or a repeated id', () => {
    expect(() => new SecretBox([])).toThrow();
    expect(() => new SecretBox([{ id: 'a.b', key: KEY_A }])).toThrow();
    expect(() => new SecretBox([{ id: 'a', key: randomBytes(16) }])).toThrow();
    expect(
      () =>
        new SecretBox([
          { id: 'a', key: KEY_A },
          { id: 'a', key: KEY_B },
        ]),
    ).toThrow();
  });

  it('WebhookSecrets opens each sealed secret once, checks its row, and keeps a bounded number', () => {
    const box = new SecretBox([{ id: 'a', key: KEY_A }]);
    const secrets = new WebhookSecrets(box, { entriesMax: 2 });
    const sealed = secrets.seal('prj_1', 'we_1', 'whsec_one');
    expect(secrets.open('prj_1', 'we_1', sealed)).toBe('whsec_one');
    expect(secrets.open('prj_1', 'we_1', sealed)).toBe('whsec_one');
    // The cache is keyed by the row too: the same ciphertext in another endpoint's row does not open.
    expect(() => secrets.open('prj_1', 'we_2', sealed)).toThrow();
    secrets.open('prj_1', 'we_2', secrets.seal('prj_1', 'we_2', 'whsec_two'));
    secrets.open('prj_1', 'we_3', secrets.seal('prj_1', 'we_3', 'whsec_three'));
    expect(secrets.size).toBe(2);
  });
});

describe('SECRETS_ENCRYPTION_KEYS', () => {
  const a = KEY_A.toString('base64');
  const b = KEY_B.toString('base64url').replace(/=+$/, '');

  it('lists id:key pairs, the first seals; SECRETS_ENCRYPTION_KEY is a ring of one named default', () => {
    expect(loadConfig({ SECRETS_ENCRYPTION_KEYS: `k2:${b}, k1:${a}` }).secrets.keys).toEqual([
      { id: 'k2', keyHex: KEY_B.toString('hex') },
      { id: 'k1', keyHex: KEY_A.toString('hex') },
    ]);
    expect(loadConfig({ SECRETS_ENCRYPTION_KEY: KEY_A.toString('hex') }).secrets.keys).toEqual([
      { id: 'default', keyHex: KEY_A.toString('hex') },
    ]);
    expect(loadConfig({}).secrets.keys).toBeUndefined();
    expect(
      loadConfig({ NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525', SECRETS_ENCRYPTION_KEYS: `k1:${a}` }).secrets.keys,
    ).toHaveLength(1);
  });

  it.each([
    [{ SECRETS_ENCRYPTION_KEYS: a }, 'SECRETS_ENCRYPTION_KEYS \\(entry 1\\)'],
    [{ SECRETS_ENCRYPTION_KEYS: `bad.id:${a}` }, 'SECRETS_ENCRYPTION_KEYS \\(entry 1\\)'],
    [{ SECRETS_ENCRYPTION_KEYS: `k1:${a},k1:${b}` }, 'SECRETS_ENCRYPTION_KEYS \\(entry 2\\)'],
    [{ SECRETS_ENCRYPTION_KEYS: `k1:${randomBytes(16).toString('base64')}` }, 'SECRETS_ENCRYPTION_KEYS \\(entry 1\\) "k1"'],
    [{ SECRETS_ENCRYPTION_KEYS: `k1:${a}`, SECRETS_ENCRYPTION_KEY: a }, 'SECRETS_ENCRYPTION_KEYS'],
    [{ SECRETS_ENCRYPTION_KEY: 'short' }, 'SECRETS_ENCRYPTION_KEY'],
    [{ NODE_ENV: 'production' }, 'SECRETS_ENCRYPTION_KEYS'],
  ])('refuses %o, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}:`));
  });
});

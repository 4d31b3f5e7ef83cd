/**
 * Each project's keys that sign session JWTs (docs/adr/0020-session-jwts.md). A project gets its
 * first key lazily, on the first JWT it needs, together with its next key, which is published
 * before it signs; `rotate` makes the next key sign, makes a new next key, and retires the
 * previous, which stays published until every JWT it signed has expired. A verifier that fetched
 * the key set since the last rotation therefore knows the key of every JWT signed after the next. The private
 * half is sealed with the service keyring (lib/secret-box.ts, security/sealed-columns.ts) and
 * opened once per process: the KeyObject is cached by `kid`, which never changes meaning.
 */
import { createPrivateKey, generateKeyPair as generateKeyPairCallback, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import { SESSION_JWT_TTL_SECONDS_MAX, type SessionJwtAlg } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import * as store from './signing-keys.store.js';

const generateKeyPair = promisify(generateKeyPairCallback);

/** Private keys kept opened in memory; past this many (projects × rotations) the cache starts over. */
const PRIVATE_KEYS_CACHED_MAX = 10_000;
const KID_RANDOM_LENGTH = 22;

/** The associated data a private key is sealed with: it binds the sealed value to its project and key id. */
export function signingKeyContext(projectId: string, kid: string): string {
  return `session_signing_keys:${projectId}:${kid}`;
}

export interface SigningKey {
  readonly kid: string;
  readonly alg: SessionJwtAlg;
  readonly privateKey: KeyObject;
}

/** A public key as the JWKS route publishes it. */
export type PublicJwk = Readonly<Record<string, unknown>> & { readonly kid: string };

export interface SigningKeysOptions {
  readonly secrets: SecretBox;
  /** `SESSION_JWT_ALG`: the algorithm of keys made from now on; existing keys keep theirs. */
  readonly alg: SessionJwtAlg;
}

export class SigningKeys {
  readonly #secrets: SecretBox;
  readonly #alg: SessionJwtAlg;
  readonly #privateKeys = new Map<string, KeyObject>();

  constructor(options: SigningKeysOptions) {
    this.#secrets = options.secrets;
    this.#alg = options.alg;
  }

  /**
   * The project's signing key, made now if it has none, with `db` (a session's transaction, so
   * that a key is only ever cached once read back from the database: a key made in a transaction
   * that rolls back is read by nobody).
   */
  async signingKey(db: Kysely<Database>, projectId: string, now: Date): Promise<SigningKey> {
    let row = await store.findSigningKey(db, projectId);
    if (row === undefined) {
      await store.insertSigningKeyIfNone(db, await this.#newKey(projectId, now, 'signing'));
      await store.insertSigningKeyIfNone(db, await this.#newKey(projectId, now, 'next'));
      row = await store.findSigningKey(db, projectId);
      if (row === undefined) throw new Error(`project ${projectId} has no signing key right after making one`);
    }
    return { kid: row.kid, alg: row.alg, privateKey: this.#privateKey(row) };
  }

  /**
   * Retires the signing key (if any), makes the next key sign (published since the last rotation,
   * so verifiers know it already), and makes a new next key. In the caller's transaction. Answers
   * the key that signs now.
   */
  async rotateInTransaction(
    trx: Kysely<Database>,
    projectId: string,
    now: Date,
  ): Promise<store.SigningKeyRow & { previous_kid: string | null }> {
    const nowIso = isoTime(now);
    const previous = await store.retireSigningKey(trx, projectId, nowIso);
    if (!(await store.activateNextKey(trx, projectId, nowIso))) {
      // A project without keys yet: its first signing key.
      await store.insertSigningKeyIfNone(trx, await this.#newKey(projectId, now, 'signing'));
    }
    if (!(await store.insertSigningKeyIfNone(trx, await this.#newKey(projectId, now, 'next')))) {
      throw new Error(`project ${projectId} has a next signing key right after activating it`);
    }
    const row = await store.findSigningKey(trx, projectId);
    if (row === undefined) throw new Error(`project ${projectId} has no signing key right after a rotation`);
    return { ...row, previous_kid: previous ?? null };
  }

  /**
   * The public keys a verifier may meet: the signing key, and each retired one until every JWT
   * it signed has expired. A JWT lives at most `SESSION_JWT_TTL_SECONDS_MAX` whatever the
   * configuration was when it was signed, so that bound, not today's setting, decides.
   */
  async publishedKeys(db: Kysely<Database>, projectId: string, now: Date): Promise<PublicJwk[]> {
    const rows = await this.publishedKeyRows(db, projectId, now);
    return rows.map((row) => JSON.parse(row.public_jwk) as PublicJwk);
  }

  /** The published keys' rows, newest first, without their private half: for the JWKS and the list of keys. */
  async publishedKeyRows(
    db: Kysely<Database>,
    projectId: string,
    now: Date,
  ): Promise<Array<Omit<store.SigningKeyRow, 'private_key_sealed'>>> {
    const retiredAfter = isoTime(addMilliseconds(now, -SESSION_JWT_TTL_SECONDS_MAX * 1000));
    return store.listPublishedKeys(db, projectId, retiredAfter);
  }

  #privateKey(row: store.SigningKeyRow): KeyObject {
    const cached = this.#privateKeys.get(row.kid);
    if (cached !== undefined) return cached;
    const pem = this.#secrets.open(row.private_key_sealed, signingKeyContext(row.project_id, row.kid));
    const key = createPrivateKey(pem);
    if (this.#privateKeys.size >= PRIVATE_KEYS_CACHED_MAX) this.#privateKeys.clear();
    this.#privateKeys.set(row.kid, key);
    return key;
  }

  /** A new key: `signing` signs from now on; `next` is published and signs after the next rotation. */
  async #newKey(projectId: string, now: Date, role: 'signing' | 'next'): Promise<store.SigningKeyRow> {
    const alg = this.#alg;
    const kid = `sjk_${randomBase62(KID_RANDOM_LENGTH)}`;
    const { publicKey, privateKey } = await generateKeyPairFor(alg);
    const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const nowIso = isoTime(now);
    return {
      kid,
      project_id: projectId,
      alg,
      public_jwk: JSON.stringify(publicJwk),
      private_key_sealed: this.#secrets.seal(pem, signingKeyContext(projectId, kid)),
      created_at: nowIso,
      activated_at: role === 'signing' ? nowIso : null,
      retired_at: null,
    };
  }
}

async function generateKeyPairFor(alg: SessionJwtAlg): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (alg) {
    case 'ES256':
      return generateKeyPair('ec', { namedCurve: 'P-256' });
    case 'RS256':
      return generateKeyPair('rsa', { modulusLength: 2048 });
    case 'EdDSA':
      return generateKeyPair('ed25519');
  }
}

import { isSealed, type SecretBox } from '../lib/secret-box.js';

/**
 * What the idempotency hook keeps of a request and its response, sealed (docs/adr/0015-secrets-at-rest.md).
 *
 * Every response stored for replay is sealed, whatever its route: sign-up, log in, refresh, key
 * creation, webhook creation and rotation answer with credentials, and a route added later cannot
 * forget to. The request's fingerprint is sealed too: it is a SHA-256 of each body field, and for a
 * body that holds a password an unsalted SHA-256 of the password is not something to store. Both
 * are bound to their key by the associated data, so a sealed value copied to another key (or
 * project) does not open. The keys the ledger writes in its own flush (movements' keys, and the
 * request keys of batches, captures and voids: `ledgerKeyRow`) stay in clear: its answers and
 * requests carry no credential.
 */

/** `request_hash` of a hook key: the real hash is sealed inside `request_fields`, and no SHA-256 in hex equals this. */
export const SEALED_REQUEST_HASH = 'sealed';

export interface IdempotencyKeyName {
  readonly projectId: string;
  readonly scope: string;
  readonly key: string;
}

export interface RequestFingerprint {
  readonly hash: string;
  /** Field name → hash of its value; `$route` stands for the method, route and path parameters. */
  readonly fields: Readonly<Record<string, string>>;
}

/** The associated data of a key's sealed fingerprint; JSON, since a key or scope may hold any character. */
export function idempotencyRequestContext(name: IdempotencyKeyName): string {
  return `idempotency_request:${JSON.stringify([name.projectId, name.scope, name.key])}`;
}

/** The associated data of a key's sealed response. */
export function idempotencyResponseContext(name: IdempotencyKeyName): string {
  return `idempotency_response:${JSON.stringify([name.projectId, name.scope, name.key])}`;
}

export function sealFingerprint(box: SecretBox, name: IdempotencyKeyName, fingerprint: RequestFingerprint): string {
  return box.seal(JSON.stringify(fingerprint), idempotencyRequestContext(name));
}

/** The fingerprint stored with a key: sealed by the hook, or in clear (the ledger's keys, and hook keys from before sealing). */
export function storedFingerprint(
  box: SecretBox,
  name: IdempotencyKeyName,
  row: { readonly request_hash: string; readonly request_fields: string },
): RequestFingerprint {
  if (row.request_hash === SEALED_REQUEST_HASH) {
    return JSON.parse(box.open(row.request_fields, idempotencyRequestContext(name))) as RequestFingerprint;
  }
  return { hash: row.request_hash, fields: JSON.parse(row.request_fields) as Record<string, string> };
}

export function sealResponse(box: SecretBox, name: IdempotencyKeyName, body: string): string {
  return box.seal(body, idempotencyResponseContext(name));
}

/** The body to replay: opened when sealed; a body stored in clear before sealing existed is replayed as it is. */
export function openResponse(box: SecretBox, name: IdempotencyKeyName, stored: string | null): string {
  if (stored === null) return '';
  return isSealed(stored) ? box.open(stored, idempotencyResponseContext(name)) : stored;
}

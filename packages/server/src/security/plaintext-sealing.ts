import type { Db } from '../db/database.js';
import { type IdempotencyKeyName, SEALED_REQUEST_HASH, sealFingerprint, sealResponse } from '../lib/idempotency.sealing.js';
import { webhookSecretContext } from '../modules/webhooks/webhooks.secrets.js';
import { isSealed, type SecretBox } from '../lib/secret-box.js';

const BATCH_ROWS = 500;

export interface PlaintextSealingCounts {
  webhook_endpoints: number;
  idempotency_keys: number;
}

/**
 * Seals what versions before migration 0014 stored in clear (docs/adr/0015-secrets-at-rest.md):
 * webhook signing secrets, and the responses (and request fingerprints) of the idempotency keys the
 * HTTP hook kept for 24 hours. A migration cannot do it, since it has no keyring; the service does
 * it at start, before it serves or delivers anything, and `svc secrets rotate` again.
 *
 * Each row is written by one compare-and-set UPDATE on the values it read, so processes starting
 * together, or a request changing the row meanwhile, never lose a write: the loser leaves the row.
 *
 * At start (`everyRow` false) the idempotency keys are read in order of expiry and the pass stops at
 * the first key that is sealed already: keys written since the upgrade expire after every key
 * written before it, so after the first start this costs one query. `svc secrets rotate` reads every
 * 24-hour key, which also finds one that an older process wrote during a rolling upgrade.
 */
export async function sealPlaintextSecrets(
  db: Db,
  box: SecretBox,
  options: { readonly everyRow: boolean; readonly batchRows?: number },
): Promise<PlaintextSealingCounts> {
  const batchRows = options.batchRows ?? BATCH_ROWS;
  return {
    webhook_endpoints: await sealWebhookSecrets(db, box, batchRows),
    idempotency_keys: await sealIdempotencyKeys(db, box, batchRows, options.everyRow),
  };
}

async function sealWebhookSecrets(db: Db, box: SecretBox, batchRows: number): Promise<number> {
  let sealed = 0;
  let after = '';
  for (;;) {
    const rows = await db.kysely
      .selectFrom('webhook_endpoints')
      .select(['id', 'project_id', 'secret', 'previous_secret', 'secret_sealed', 'previous_secret_sealed'])
      .where('secret', '<>', '')
      .where('id', '>', after)
      .orderBy('id')
      .limit(batchRows)
      .execute();
    for (const row of rows) {
      const context = webhookSecretContext(row.project_id, row.id);
      const previous = row.previous_secret === null || row.previous_secret === '' ? null : row.previous_secret;
      const result = await db.kysely
        .updateTable('webhook_endpoints')
        .set({
          secret: '',
          previous_secret: null,
          secret_sealed: box.seal(row.secret, context),
          previous_secret_sealed: previous === null ? row.previous_secret_sealed : box.seal(previous, context),
        })
        .where('id', '=', row.id)
        .where('secret', '=', row.secret)
        .where('previous_secret', row.previous_secret === null ? 'is' : '=', row.previous_secret)
        .executeTakeFirst();
      sealed += Number(result.numUpdatedRows);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < batchRows) return sealed;
    after = last.id;
  }
}

async function sealIdempotencyKeys(db: Db, box: SecretBox, batchRows: number, everyRow: boolean): Promise<number> {
  let sealed = 0;
  let after: { expires_at: string; project_id: string; scope: string; key: string } | undefined;
  for (;;) {
    let query = db.kysely
      .selectFrom('idempotency_keys')
      .select(['project_id', 'scope', 'key', 'request_hash', 'request_fields', 'response_body', 'expires_at'])
      // 24-hour keys are the HTTP hook's; the ledger's own keys (kept forever) hold nothing secret.
      .where('expires_at', 'is not', null);
    if (after !== undefined) {
      const cursor = after;
      query = query.where((eb) =>
        eb(
          eb.refTuple('expires_at', 'project_id', 'scope', 'key'),
          '>',
          eb.tuple(cursor.expires_at, cursor.project_id, cursor.scope, cursor.key),
        ),
      );
    }
    const rows = await query.orderBy('expires_at').orderBy('project_id').orderBy('scope').orderBy('key').limit(batchRows).execute();
    for (const row of rows) {
      const plainRequest = row.request_hash !== SEALED_REQUEST_HASH;
      const plainResponse = row.response_body !== null && !isSealed(row.response_body);
      if (!plainRequest && !plainResponse) {
        if (everyRow) continue;
        return sealed;
      }
      const name: IdempotencyKeyName = { projectId: row.project_id, scope: row.scope, key: row.key };
      const result = await db.kysely
        .updateTable('idempotency_keys')
        .set({
          request_hash: SEALED_REQUEST_HASH,
          request_fields: plainRequest
            ? sealFingerprint(box, name, { hash: row.request_hash, fields: JSON.parse(row.request_fields) as Record<string, string> })
            : row.request_fields,
          response_body: plainResponse && row.response_body !== null ? sealResponse(box, name, row.response_body) : row.response_body,
        })
        .where('project_id', '=', row.project_id)
        .where('scope', '=', row.scope)
        .where('key', '=', row.key)
        .where('request_hash', '=', row.request_hash)
        .where('request_fields', '=', row.request_fields)
        .where('response_body', row.response_body === null ? 'is' : '=', row.response_body)
        .executeTakeFirst();
      sealed += Number(result.numUpdatedRows);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || last.expires_at === null || rows.length < batchRows) return sealed;
    after = { expires_at: last.expires_at, project_id: last.project_id, scope: last.scope, key: last.key };
  }
}

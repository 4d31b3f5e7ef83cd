import { type RawBuilder, sql } from 'kysely';
import { idempotencyRequestContext, idempotencyResponseContext, SEALED_REQUEST_HASH } from '../lib/idempotency.sealing.js';
import { totpSecretContext } from '../modules/mfa/second-factor.js';
import { secretContext as oauthProviderContext, stateContext as oauthStateContext } from '../modules/oauth/oauth.service.js';
import { requestContext as ssoRequestContext, secretContext as ssoConnectionContext } from '../modules/sso/sso.service.js';
import { signingKeyContext } from '../modules/sessions/signing-keys.js';
import { webhookSecretContext } from '../modules/webhooks/webhooks.secrets.js';

/**
 * Every column that holds a sealed value (lib/secret-box.ts), in one place: what
 * `svc secrets rotate` re-seals, and what the secrets-at-rest test checks. A new sealed column is
 * added here, with the associated data its module seals it with (docs/adr/0015-secrets-at-rest.md).
 */
export interface SealedColumn {
  readonly table: string;
  readonly column: string;
  /** The row's primary key, in order: the rotation pages by it and updates one row at a time by it. */
  readonly key: readonly string[];
  /** The other columns the associated data is made of. */
  readonly contextColumns: readonly string[];
  /** The associated data the value was sealed with: it binds the value to its row. */
  readonly context: (row: Readonly<Record<string, string>>) => string;
  /** Narrows the rows that hold sealed values, where the column also holds plain ones. */
  readonly where?: RawBuilder<unknown>;
}

const idempotencyKey = (row: Readonly<Record<string, string>>) => ({
  projectId: field(row, 'project_id'),
  scope: field(row, 'scope'),
  key: field(row, 'key'),
});
/** The HTTP hook's keys; the ledger's own keys in the same table keep plain JSON (nothing secret). */
const hookKeysOnly = sql`request_hash = ${SEALED_REQUEST_HASH}`;

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'oauth_providers',
    column: 'secret_sealed',
    key: ['project_id', 'provider'],
    contextColumns: [],
    context: (row) => oauthProviderContext(field(row, 'project_id'), field(row, 'provider')),
  },
  {
    table: 'oauth_states',
    column: 'code_verifier_sealed',
    key: ['state_hash'],
    contextColumns: ['project_id'],
    context: (row) => oauthStateContext(field(row, 'project_id'), field(row, 'state_hash')),
  },
  {
    table: 'sso_connections',
    column: 'oidc_client_secret_sealed',
    key: ['id'],
    contextColumns: ['project_id'],
    context: (row) => ssoConnectionContext(field(row, 'project_id'), field(row, 'id')),
  },
  {
    table: 'sso_requests',
    column: 'code_verifier_sealed',
    key: ['request_key'],
    contextColumns: ['project_id'],
    context: (row) => ssoRequestContext(field(row, 'project_id'), field(row, 'request_key')),
  },
  {
    table: 'webhook_endpoints',
    column: 'secret_sealed',
    key: ['id'],
    contextColumns: ['project_id'],
    context: (row) => webhookSecretContext(field(row, 'project_id'), field(row, 'id')),
  },
  {
    table: 'webhook_endpoints',
    column: 'previous_secret_sealed',
    key: ['id'],
    contextColumns: ['project_id'],
    context: (row) => webhookSecretContext(field(row, 'project_id'), field(row, 'id')),
  },
  {
    table: 'mfa_totp',
    column: 'secret_sealed',
    key: ['project_id', 'user_id'],
    contextColumns: [],
    context: (row) => totpSecretContext(field(row, 'project_id'), field(row, 'user_id')),
  },
  {
    table: 'session_signing_keys',
    column: 'private_key_sealed',
    key: ['kid'],
    contextColumns: ['project_id'],
    context: (row) => signingKeyContext(field(row, 'project_id'), field(row, 'kid')),
  },
  {
    table: 'idempotency_keys',
    column: 'request_fields',
    key: ['project_id', 'scope', 'key'],
    contextColumns: [],
    context: (row) => idempotencyRequestContext(idempotencyKey(row)),
    where: hookKeysOnly,
  },
  {
    table: 'idempotency_keys',
    column: 'response_body',
    key: ['project_id', 'scope', 'key'],
    contextColumns: [],
    context: (row) => idempotencyResponseContext(idempotencyKey(row)),
    where: hookKeysOnly,
  },
];

function field(row: Readonly<Record<string, string>>, name: string): string {
  const value = row[name];
  if (value === undefined) throw new Error(`the sealed-column registry reads ${name}, which the row lacks`);
  return value;
}

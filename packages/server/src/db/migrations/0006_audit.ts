import { type Kysely, PostgresAdapter } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The audit log (docs/adr/0007-audit-log.md).
 *
 * - `audit_log`: one row per entry, written in the transaction of the change it records and never
 *   updated; only the retention job deletes (whole sealed prefixes).
 * - `audit_unsealed`: the entries not chained yet, in insertion order; written beside each entry,
 *   emptied by the sealer. It stays small, so its pages stay hot.
 * - `audit_chain`: the hash chain per project, appended by the sealer. The primary key
 *   (project_id, seq) lets only one of two racing sealers append a link.
 * - `audit_checkpoints`: per project, the last link removed by retention and its hash, where
 *   verification starts.
 *
 * No foreign key to `projects`: each would cost a lookup on every audited write, and a project is
 * never deleted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('actor_type', 'text', (column) => column.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_user_id', 'text')
    .addColumn('resource_type', 'text', (column) => column.notNull())
    .addColumn('resource_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('changes', 'text', (column) => column.notNull())
    .execute();
  // GET /v1/audit-logs (newest first, (created_at, id) cursor), the export and the retention cut.
  await db.schema.createIndex('audit_log_project_created_idx').on('audit_log').columns(['project_id', 'created_at', 'id']).execute();
  // ?resource_id=: the history of one wallet, user or endpoint.
  await db.schema
    .createIndex('audit_log_project_resource_idx')
    .on('audit_log')
    .columns(['project_id', 'resource_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('audit_unsealed')
    .addColumn('seq', postgres ? 'bigint' : 'integer', (column) =>
      // SQLite: an INTEGER PRIMARY KEY is the rowid, assigned in insertion order.
      postgres ? column.primaryKey().generatedAlwaysAsIdentity() : column.primaryKey(),
    )
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('entry_id', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('audit_unsealed_project_seq_idx').on('audit_unsealed').columns(['project_id', 'seq']).execute();

  await db.schema
    .createTable('audit_chain')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('entry_id', 'text', (column) => column.notNull())
    .addColumn('prev_hash', 'text', (column) => column.notNull())
    .addColumn('hash', 'text', (column) => column.notNull())
    .addColumn('sealed_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('audit_chain_pk', ['project_id', 'seq'])
    .execute();
  // An entry is chained once; the API reads an entry's link by its id.
  await db.schema.createIndex('audit_chain_entry_idx').on('audit_chain').columns(['entry_id']).unique().execute();

  await db.schema
    .createTable('audit_checkpoints')
    .addColumn('project_id', 'text', (column) => column.primaryKey())
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('hash', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_checkpoints').execute();
  await db.schema.dropTable('audit_chain').execute();
  await db.schema.dropTable('audit_unsealed').execute();
  await db.schema.dropTable('audit_log').execute();
}

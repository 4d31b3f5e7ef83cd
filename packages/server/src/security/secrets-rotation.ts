import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isSealed, type SecretBox } from '../lib/secret-box.js';
import { type PlaintextSealingCounts, sealPlaintextSecrets } from './plaintext-sealing.js';
import { type SealedColumn, SEALED_COLUMNS } from './sealed-columns.js';

/** Rows read per query; each row is then re-sealed and written by its own UPDATE. */
export const ROTATION_BATCH_ROWS = 500;

export interface ColumnRotation {
  /** Re-sealed under the sealing key now. */
  resealed: number;
  /** Sealed under the sealing key already: nothing to do. */
  current: number;
  /** Changed or deleted by the service between the read and the write: left as the service wrote it. */
  changed_meanwhile: number;
  /** Opened by no key of the ring (or not a sealed value): left as it is, and the command fails. */
  unreadable: number;
}

export interface RotationReport {
  readonly key_id: string;
  /** Plain values an older version left (webhook secrets, idempotent responses), sealed first. */
  readonly plaintext_sealed: PlaintextSealingCounts;
  /** Per `table.column` of the registry (security/sealed-columns.ts). */
  readonly columns: Record<string, ColumnRotation>;
  readonly unreadable: number;
}

/**
 * `svc secrets rotate`: every sealed value in the database, re-sealed under the keyring's first key
 * (docs/adr/0015-secrets-at-rest.md). Idempotent (values already under that key are counted and
 * left), and safe while the service runs: rows are read in pages by primary key and each is written
 * by one compare-and-set UPDATE (`… where <key> and <column> = <value read>`), so a value the service
 * changed meanwhile (a rotated webhook secret, a completed idempotent request) is never overwritten.
 * Run it once every process has the new keyring, so none seals under the old first key any more.
 */
export async function rotateSealedSecrets(db: Db, box: SecretBox, options: { readonly batchRows?: number } = {}): Promise<RotationReport> {
  const batchRows = options.batchRows ?? ROTATION_BATCH_ROWS;
  const plaintext = await sealPlaintextSecrets(db, box, { everyRow: true, batchRows });
  const columns: Record<string, ColumnRotation> = {};
  let unreadable = 0;
  for (const entry of SEALED_COLUMNS) {
    const counts = await rotateColumn(db, box, entry, batchRows);
    columns[`${entry.table}.${entry.column}`] = counts;
    unreadable += counts.unreadable;
  }
  return { key_id: box.primaryKeyId, plaintext_sealed: plaintext, columns, unreadable };
}

async function rotateColumn(db: Db, box: SecretBox, entry: SealedColumn, batchRows: number): Promise<ColumnRotation> {
  const counts: ColumnRotation = { resealed: 0, current: 0, changed_meanwhile: 0, unreadable: 0 };
  const keyColumns = sql.join(entry.key.map((name) => sql.ref(name)));
  const selected = sql.join([...new Set([...entry.key, ...entry.contextColumns, entry.column])].map((name) => sql.ref(name)));
  const value = sql.ref(entry.column);
  let after: readonly string[] | undefined;
  for (;;) {
    const cursor = after === undefined ? sql`` : sql`and (${keyColumns}) > (${sql.join(after.map((part) => sql`${part}`))})`;
    const narrowed = entry.where === undefined ? sql`` : sql`and ${entry.where}`;
    const { rows } = await sql<Record<string, string>>`
      select ${selected} from ${sql.table(entry.table)}
      where ${value} is not null ${narrowed} ${cursor}
      order by ${keyColumns} limit ${batchRows}`.execute(db.kysely);
    for (const row of rows) {
      const stored = row[entry.column] ?? '';
      if (box.isCurrent(stored)) {
        counts.current += 1;
        continue;
      }
      let resealed: string;
      try {
        if (!isSealed(stored)) throw new Error('not sealed');
        const context = entry.context(row);
        resealed = box.seal(box.open(stored, context), context);
      } catch {
        counts.unreadable += 1;
        continue;
      }
      const match = sql.join(
        entry.key.map((name) => sql`${sql.ref(name)} = ${row[name] ?? ''}`),
        sql` and `,
      );
      const result = await sql`
        update ${sql.table(entry.table)} set ${value} = ${resealed}
        where ${match} and ${value} = ${stored}`.execute(db.kysely);
      if (Number(result.numAffectedRows ?? 0n) === 1) counts.resealed += 1;
      else counts.changed_meanwhile += 1;
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < batchRows) return counts;
    after = entry.key.map((name) => last[name] ?? '');
  }
}

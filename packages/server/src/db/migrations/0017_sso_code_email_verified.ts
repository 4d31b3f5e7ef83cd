import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * `sso_codes.email_verified`: whether the identity provider vouched for the address it asserted
 * (docs/adr/0014-identity-linking.md). An OpenID Connect IdP that says `email_verified: false` is
 * not trusted to prove the address, so the one-time code carries that answer from the IdP's return
 * to `POST /v1/auth/sso/callback`, where the user is found, linked or created.
 *
 * Codes live two minutes; one in flight while this runs counts as unproven (0), the safe side: at
 * worst that one sign-in is refused with `email_taken` and the next one works.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sso_codes')
    .addColumn('email_verified', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sso_codes').dropColumn('email_verified').execute();
}

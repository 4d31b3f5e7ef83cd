import type { ColumnType } from 'kysely';

/** The projects module's tables (modules/projects): projects and their secret keys. */
export interface ProjectsDatabase {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
}

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: string;
  /** The relying party for passkeys as JSON `{rp_id, rp_name, origins}`; null until the project sets one. */
  webauthn: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string | null;
  /** SHA-256 (hex) of the whole secret key; the key itself is never stored. */
  key_hash: string;
  /** `svc_sk_` and the first four characters after it, for display. */
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

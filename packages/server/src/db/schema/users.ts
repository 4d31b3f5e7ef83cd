/** The users module's tables (modules/users): users, custom roles, and linked provider accounts. */
export interface UsersDatabase {
  users: UsersTable;
  roles: RolesTable;
  user_identities: UserIdentitiesTable;
}

export interface UsersTable {
  id: string;
  project_id: string;
  /** As given, trimmed, with the domain lower-cased: what emails are sent to and users see. */
  email: string;
  /** The whole address lower-cased: unique per project, so emails compare case-insensitively. */
  email_key: string;
  name: string;
  /** argon2id PHC string; null for users without a password (OAuth, SSO). */
  password_hash: string | null;
  email_verified_at: string | null;
  /** JSON array of role keys. */
  roles: string;
  /** JSON object of string → string. */
  metadata: string;
  banned_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Custom roles of a project; the built-in `owner`, `admin` and `member` are not stored. */
export interface RolesTable {
  project_id: string;
  key: string;
  name: string;
  /** JSON array of permission strings. */
  permissions: string;
  created_at: string;
  updated_at: string;
}

/** A provider's account (provider, subject) linked to a user; no provider token is kept. */
export interface UserIdentitiesTable {
  project_id: string;
  provider: string;
  subject: string;
  user_id: string;
  /** The email the provider gave at the last sign-in, for display. */
  email: string | null;
  created_at: string;
  last_used_at: string;
}

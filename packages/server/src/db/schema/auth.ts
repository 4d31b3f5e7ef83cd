/** The auth module's table (modules/auth): the single-use tokens sent by email. */
export interface AuthDatabase {
  email_tokens: EmailTokensTable;
}

export type EmailTokenPurpose = 'verify_email' | 'password_reset';

/** Single-use tokens sent by email. Only their SHA-256 is stored. */
export interface EmailTokensTable {
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  project_id: string;
  user_id: string;
  purpose: EmailTokenPurpose;
  /** The address the token was sent to; verification verifies this address only. */
  email: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

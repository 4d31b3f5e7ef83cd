/** The MFA module's tables (modules/mfa): authenticator apps, recovery codes, second-factor tokens and emailed sign-in codes. */
export interface MfaDatabase {
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_tokens: MfaTokensTable;
  email_code_requests: EmailCodeRequestsTable;
}

export type MfaTotpStatus = 'pending' | 'active';

/** A user's authenticator app (migration 0018_mfa). The secret is sealed, never stored in clear. */
export interface MfaTotpTable {
  project_id: string;
  user_id: string;
  /** The base32 secret, sealed with the service's SecretBox, bound to (project, user). */
  secret_sealed: string;
  /** `pending` from enrolment until a first code confirms it; then `active`. */
  status: MfaTotpStatus;
  /** The last 30-second time step whose code was accepted; a code of it or an earlier one is refused. */
  last_used_step: number | null;
  created_at: string;
  activated_at: string | null;
}

/** Single-use recovery codes, as SHA-256 (hex) of the normalized code. */
export interface MfaRecoveryCodesTable {
  project_id: string;
  user_id: string;
  code_hash: string;
  used_at: string | null;
  created_at: string;
}

/** A sign-in waiting for its second factor: SHA-256 (hex) of the whole `svc_mfa_…` token. */
export interface MfaTokensTable {
  token_hash: string;
  project_id: string;
  user_id: string;
  /** Codes tried with it; the fifth wrong one ends it. */
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
  /** The first factor's methods (JSON array), which the session's `amr` starts with. */
  amr: string | null;
}

/**
 * One sign-in code asked for an address (up to 3 live at once); the code itself only as a salted
 * SHA-256. Supersedes `email_codes` (one row per address), which migration 0031 emptied.
 */
export interface EmailCodeRequestsTable {
  project_id: string;
  /** Random; names the request, salts the hash, and ties the queued email to this row. */
  request_ref: string;
  /** The lower-cased address, as `users.email_key`. */
  email_key: string;
  email: string;
  /** Null until the email is composed, when the code is made. */
  code_hash: string | null;
  /** 1 when the request asked to create the user if none has the address. */
  create_user: number;
  /** Wrong codes tried while this one was live; the fifth ends it. */
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

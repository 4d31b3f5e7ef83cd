/** The passkeys module's tables (modules/passkeys): passkeys and their ceremonies' challenges. */
export interface PasskeysDatabase {
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
}

export type PasskeyChallengePurpose = 'registration' | 'authentication';

export interface PasskeysTable {
  /** `pk_…`. */
  id: string;
  project_id: string;
  user_id: string;
  /** The authenticator's credential id, base64url; unique within the project. Not a secret. */
  credential_id: string;
  /** The credential's COSE public key, base64url. Not a secret. */
  public_key: string;
  /** The authenticator's signature counter at the last accepted ceremony (0 when it keeps none). */
  sign_count: number;
  /** JSON array of the transports the authenticator reported (`internal`, `usb`, `hybrid`, …). */
  transports: string;
  /** `singleDevice` or `multiDevice` (a synced passkey). */
  device_type: string;
  /** 1 when the credential is backed up (synced), else 0. */
  backed_up: number;
  /** The authenticator model's AAGUID; all zeros under attestation `none` for most authenticators. */
  aaguid: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface PasskeyChallengesTable {
  /** `pkc_…`: the `challenge_id` of a sign-in; registrations find theirs by hash. */
  id: string;
  project_id: string;
  purpose: PasskeyChallengePurpose;
  /** Registration: the session's user. Sign-in with an email: that address's user, when it exists. */
  user_id: string | null;
  /** 1 when only `user_id`'s passkey may answer (none at all when it is null); 0 for a discoverable sign-in. */
  user_bound: number;
  /** SHA-256 (hex) of the challenge; the challenge itself is never stored. */
  challenge_hash: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** The organizations module's tables (modules/organizations): organizations, members, invitations and domains. */
export interface OrganizationsDatabase {
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_invitations: OrganizationInvitationsTable;
  organization_domains: OrganizationDomainsTable;
}

/** An organization of a project's users (migration 0008). The slug is unique per project. */
export interface OrganizationsTable {
  /** `org_…`. */
  id: string;
  project_id: string;
  name: string;
  slug: string;
  /** JSON object of string → string. */
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A user's membership of an organization, with the key of one of the project's roles. */
export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  project_id: string;
  role: string;
  created_at: string;
  updated_at: string;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'replaced';

/** An invitation by email to join an organization with a role; single use, 7 days. */
export interface OrganizationInvitationsTable {
  /** `inv_…`. */
  id: string;
  project_id: string;
  organization_id: string;
  /** As given, trimmed, with the domain lower-cased. */
  email: string;
  /** The whole address lower-cased: what the accepting user's verified email is compared with. */
  email_key: string;
  role: string;
  status: InvitationStatus;
  /** SHA-256 (hex) of the token in the email; null until the email is composed. */
  token_hash: string | null;
  expires_at: string;
  accepted_at: string | null;
  accepted_user_id: string | null;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * An email domain an organization claims (migration 0032): verified by a TXT record (`dns`) or by
 * the operator's word (`manual`). Verified for one organization of a project at most.
 */
export interface OrganizationDomainsTable {
  project_id: string;
  organization_id: string;
  /** Lower case, ASCII (punycode), no trailing dot. */
  domain: string;
  verification: 'dns' | 'manual';
  status: 'pending' | 'verified';
  /** What the TXT record at `_svc-verification.<domain>` must hold; random per organization and domain. */
  txt_value: string;
  created_at: string;
  verified_at: string | null;
}

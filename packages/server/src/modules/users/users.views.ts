/**
 * The users module's stored rows as the API shows them: a user (`toUser`, also other modules' way
 * to answer a user) and a provider account linked to one (`toIdentity`).
 */
import type * as identities from './identities.store.js';
import type { Identity, User } from './users.schemas.js';
import type { UserRecord } from './users.service.js';

export function toUser(row: UserRecord): User {
  return {
    id: row.id,
    object: 'user',
    email: row.email,
    name: row.name,
    email_verified: row.email_verified_at !== null,
    roles: JSON.parse(row.roles) as string[],
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    banned: row.banned_at !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toIdentity(row: identities.IdentityRow): Identity {
  return {
    object: 'identity',
    provider: row.provider,
    subject: row.subject,
    email: row.email,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
  };
}

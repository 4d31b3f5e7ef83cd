import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import type { SessionRevokedReason } from '../../db/schema.js';
import { inTransaction, isUniqueViolation, rowLockFor, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { recordEvent } from '../events/events.service.js';
import type { AuditAction, AuditContext, AuditService, AuditValue } from '../audit/audit.service.js';
import type { RolesService } from './roles.service.js';
import { LinkedIdentities } from './linked-identities.js';
import type { ListUsersQuery, UpdateUserBody, User, UserWithIdentities } from './users.schemas.js';
import * as store from './users.store.js';
import { toUser } from './users.views.js';

// Identity linking (docs/adr/0014-identity-linking.md) is part of the users module's surface.
export { IdentityLinking, type SignedInUser, type SignInAttempt, type SignInMethod } from './identity-linking.js';
export { toUser } from './users.views.js';
// Security notices are queued by the modules whose changes they report (passkeys, second factors, passwords).
export { queueSecurityNotice, type SecurityChange, securityNoticeComposers } from './security-notices.js';

export type UserRecord = store.UserRow;

const EMAIL_LENGTH_MAX = 254;
/** Deliberately loose: one @, something on each side, a dot in the domain, no spaces. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NormalizedEmail {
  /** Trimmed, domain lower-cased: what is stored and shown. */
  readonly email: string;
  /** Lower-cased whole: what is compared. */
  readonly emailKey: string;
}

/**
 * Characters no one types in an address but that make two different addresses look the same, or
 * one look like another: controls (`Cc`), zero-width and other invisible characters (the soft
 * hyphen, U+200B–U+200D, U+2060, U+FEFF: `Default_Ignorable_Code_Point`), and the marks, embeddings,
 * overrides and isolates that reorder text (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: `Cf`).
 */
const HIDDEN_EMAIL_CHARACTER = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Refuses an address with a hidden character (400 `parameter_invalid` naming `param`). Every
 * address the service takes passes here, through `normalizeEmail`; log in calls it on its own,
 * since it answers other malformed addresses as wrong credentials.
 */
export function refuseHiddenEmailCharacters(raw: string, param = 'email'): void {
  const hidden = HIDDEN_EMAIL_CHARACTER.exec(raw.trim())?.[0];
  if (hidden === undefined) return;
  const codePoint = `U+${(hidden.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new ApiError('parameter_invalid', `${param} may not contain control, invisible or bidirectional characters (${codePoint}).`, {
    param,
  });
}

/** Trims the address and lower-cases its domain; the local part keeps its case but compares without it. */
export function normalizeEmail(raw: string, param = 'email'): NormalizedEmail {
  refuseHiddenEmailCharacters(raw, param);
  const trimmed = raw.trim();
  const at = trimmed.lastIndexOf('@');
  if (trimmed.length > EMAIL_LENGTH_MAX || at < 1 || !EMAIL_PATTERN.test(trimmed)) {
    throw new ApiError('parameter_invalid', `${param} must be an email address.`, { param });
  }
  const email = `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
  return { email, emailKey: email.toLowerCase() };
}

/**
 * Work another module does in the transaction that deletes a user, before its row goes (the
 * organizations module removes the user's memberships). A refusal it throws stops the deletion.
 */
export type UserDeletionStep = (
  trx: Transaction,
  input: { projectId: string; userId: string; now: Date; context: AuditContext },
) => Promise<void>;

/**
 * Work of other modules when a sign-in claims an account whose address was never proven
 * (docs/adr/0014-identity-linking.md, rule 5): each removes what the unproven holder set up in its
 * module (passkeys) in the claim's transaction, and answers what it removed for the audit entry.
 */
export type UserClaimStep = (
  trx: Transaction,
  input: { projectId: string; userId: string; now: Date; context: AuditContext },
) => Promise<Readonly<Record<string, AuditValue>>>;

/**
 * What the users module needs of the sessions module: every session of a user revoked in the
 * caller's transaction (`SessionsService`, handed over by main.ts). Declared here, so that users
 * does not depend on sessions, which depends on users for the user it answers beside a session.
 */
export interface UserSessionRevocation {
  revokeAllForUserInTransaction(
    trx: Transaction,
    input: { projectId: string; userId: string; reason: SessionRevokedReason; now: Date },
  ): Promise<readonly unknown[]>;
}

export interface UsersServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly sessions: UserSessionRevocation;
  readonly roles: RolesService;
  readonly audit: AuditService;
  readonly deletionSteps?: readonly UserDeletionStep[];
  readonly claimSteps?: readonly UserClaimStep[];
}

/**
 * Users of a project: their profile, roles, ban and deletion. Passwords and email verification are
 * the auth module's; it changes them through the functions here that take a transaction. Linked
 * provider accounts are `LinkedIdentities`' (linked-identities.ts), answered through this class.
 */
export class UsersService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #sessions: UserSessionRevocation;
  readonly #roles: RolesService;
  readonly #audit: AuditService;
  readonly #deletionSteps: readonly UserDeletionStep[];
  readonly #claimSteps: readonly UserClaimStep[];
  readonly #identities: LinkedIdentities;

  constructor(options: UsersServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#sessions = options.sessions;
    this.#roles = options.roles;
    this.#audit = options.audit;
    this.#deletionSteps = options.deletionSteps ?? [];
    this.#claimSteps = options.claimSteps ?? [];
    this.#identities = new LinkedIdentities({ db: options.db, audit: options.audit, users: this });
  }

  /** Runs the other modules' claim steps (identity linking, rule 5) in the claim's transaction; merges what they removed. */
  async runClaimStepsInTransaction(
    trx: Transaction,
    input: { projectId: string; userId: string; now: Date; context: AuditContext },
  ): Promise<Record<string, AuditValue>> {
    const removed: Record<string, AuditValue> = {};
    for (const step of this.#claimSteps) Object.assign(removed, await step(trx, input));
    return removed;
  }

  /** Creates a user in the caller's transaction with its `user.created` event; 409 `email_taken` if the address is in use. */
  async createInTransaction(
    trx: Transaction,
    input: { projectId: string; email: NormalizedEmail; name: string; passwordHash: string | null; now: Date },
  ): Promise<UserRecord> {
    const nowIso = isoTime(input.now);
    if ((await store.findUserByEmailKey(trx, input.projectId, input.email.emailKey)) !== undefined) throw emailTaken();
    const row: UserRecord = {
      id: newId('usr'),
      project_id: input.projectId,
      email: input.email.email,
      email_key: input.email.emailKey,
      name: input.name,
      password_hash: input.passwordHash,
      email_verified_at: null,
      roles: '[]',
      metadata: '{}',
      banned_at: null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    try {
      await store.insertUser(trx, row);
    } catch (error) {
      // Two sign-ups with one address at once: the unique index decides.
      if (isUniqueViolation(error)) throw emailTaken();
      throw error;
    }
    await recordEvent(trx, {
      projectId: input.projectId,
      type: 'user.created',
      data: { user_id: row.id, email: row.email },
      createdAt: nowIso,
    });
    return row;
  }

  async get(projectId: string, userId: string): Promise<User> {
    return toUser(await this.getRecord(projectId, userId));
  }

  /** The stored user, or 404. */
  async getRecord(projectId: string, userId: string, executor: Transaction = this.#db.kysely): Promise<UserRecord> {
    const row = await store.findUser(executor, projectId, userId);
    if (row === undefined) throw new ApiError('resource_missing', `No user ${userId}.`, { param: 'id' });
    return row;
  }

  async findRecord(projectId: string, userId: string, executor?: Transaction): Promise<UserRecord | undefined> {
    return executor === undefined ? store.findUserForRead(this.#db, projectId, userId) : store.findUser(executor, projectId, userId);
  }

  /**
   * The stored user, its row locked until `trx` ends on PostgreSQL: a sign-in that checked a
   * credential outside the transaction reads it again here, after any takeover of the account
   * (docs/adr/0014-identity-linking.md) that committed in between.
   */
  async findRecordLockedInTransaction(trx: Transaction, projectId: string, userId: string): Promise<UserRecord | undefined> {
    return store.findUserLocked(trx, projectId, userId, rowLockFor(this.#db.dialect));
  }

  async findRecordByEmail(
    projectId: string,
    email: NormalizedEmail,
    executor: Transaction = this.#db.kysely,
  ): Promise<UserRecord | undefined> {
    return store.findUserByEmailKey(executor, projectId, email.emailKey);
  }

  /** True when `userId` is a user of the project (the wallets module's `UserDirectory`). */
  async userExists(projectId: string, userId: string): Promise<boolean> {
    return (await store.findUser(this.#db.kysely, projectId, userId)) !== undefined;
  }

  async list(projectId: string, query: ListUsersQuery): Promise<{ object: 'list'; data: User[]; has_more: boolean }> {
    const page = await startPage(query, {
      find: (id) => store.findUser(this.#db.kysely, projectId, id),
      missing: (id) => `No user ${id}.`,
    });
    // An ?email= that is not an address matches nobody rather than failing the list; one with a
    // hidden character is refused as it would be anywhere else.
    if (query.email !== undefined) refuseHiddenEmailCharacters(query.email);
    const emailKey = query.email === undefined ? undefined : query.email.trim().toLowerCase();
    const rows = await store.listUsers(this.#db.kysely, projectId, { emailKey, after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toUser);
  }

  async update(projectId: string, userId: string, input: UpdateUserBody, context: AuditContext): Promise<User> {
    return this.#audited(context, projectId, userId, 'user.update', () => this.#update(projectId, userId, input, context));
  }

  async #update(projectId: string, userId: string, input: UpdateUserBody, context: AuditContext): Promise<User> {
    if (input.roles !== undefined) {
      const unknown = await this.#roles.unknownKeys(projectId, input.roles);
      const first = unknown[0];
      if (first !== undefined) {
        throw new ApiError('parameter_invalid', `No role "${first}" in this project; create it with POST /v1/roles first.`, {
          param: `roles[${input.roles.indexOf(first)}]`,
        });
      }
    }
    return inTransaction(this.#db, async (trx) => {
      const now = isoTime(this.#clock.now());
      const row = await store.updateUser(trx, projectId, userId, {
        ...(input.name === undefined ? {} : { name: input.name.trim() }),
        ...(input.metadata === undefined ? {} : { metadata: JSON.stringify(input.metadata) }),
        ...(input.roles === undefined ? {} : { roles: JSON.stringify(input.roles) }),
        updated_at: now,
      });
      if (row === undefined) throw new ApiError('resource_missing', `No user ${userId}.`, { param: 'id' });
      await recordEvent(trx, { projectId, type: 'user.updated', data: { user_id: row.id, email: row.email }, createdAt: now });
      await this.#audit.record(trx, context, {
        ...userRecord(projectId, userId, 'user.update'),
        changes: { fields: Object.keys(input).sort().join(','), ...(input.roles === undefined ? {} : { roles: input.roles.join(',') }) },
        createdAt: now,
      });
      return toUser(row);
    });
  }

  /** Deletes a user: its sessions are revoked (reason `user_deleted`), then the row goes; event `user.deleted`. */
  async delete(projectId: string, userId: string, context: AuditContext): Promise<{ id: string; object: 'user'; deleted: true }> {
    await this.#audited(context, projectId, userId, 'user.delete', () =>
      inTransaction(this.#db, async (trx) => {
        const row = await this.getRecord(projectId, userId, trx);
        const now = this.#clock.now();
        for (const step of this.#deletionSteps) await step(trx, { projectId, userId, now, context });
        const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, { projectId, userId, reason: 'user_deleted', now });
        await store.deleteUser(trx, projectId, userId);
        await recordEvent(trx, { projectId, type: 'user.deleted', data: { user_id: row.id, email: row.email }, createdAt: isoTime(now) });
        await this.#audit.record(trx, context, {
          ...userRecord(projectId, userId, 'user.delete'),
          changes: { sessions_revoked: revoked.length },
          createdAt: isoTime(now),
        });
      }),
    );
    return { id: userId, object: 'user', deleted: true };
  }

  /** Bans a user: no more log in (403 `user_banned`), every session revoked (reason `user_banned`). */
  async ban(projectId: string, userId: string, context: AuditContext): Promise<User> {
    return this.#audited(context, projectId, userId, 'user.ban', () =>
      inTransaction(this.#db, async (trx) => {
        const current = await this.getRecord(projectId, userId, trx);
        const now = this.#clock.now();
        // Banning again revokes any session made since (there should be none) but changes nothing else.
        const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, { projectId, userId, reason: 'user_banned', now });
        await this.#audit.record(trx, context, {
          ...userRecord(projectId, userId, 'user.ban'),
          changes: { banned_before: current.banned_at !== null, sessions_revoked: revoked.length },
          createdAt: isoTime(now),
        });
        if (current.banned_at !== null) return toUser(current);
        return this.#changeInTransaction(trx, current, { banned_at: isoTime(now) }, now);
      }),
    );
  }

  async unban(projectId: string, userId: string, context: AuditContext): Promise<User> {
    return this.#audited(context, projectId, userId, 'user.unban', () =>
      inTransaction(this.#db, async (trx) => {
        const current = await this.getRecord(projectId, userId, trx);
        await this.#audit.record(trx, context, {
          ...userRecord(projectId, userId, 'user.unban'),
          changes: { banned_before: current.banned_at !== null },
        });
        if (current.banned_at === null) return toUser(current);
        return this.#changeInTransaction(trx, current, { banned_at: null }, this.#clock.now());
      }),
    );
  }

  /** Runs a change of a user that records its own entry; a refusal is recorded on its own after the rollback. */
  #audited<T>(context: AuditContext, projectId: string, userId: string, action: AuditAction, change: () => Promise<T>): Promise<T> {
    return this.#audit.recordingRefusals(context, userRecord(projectId, userId, action), change);
  }

  /** Stores a new password hash in the caller's transaction (no event: a password is not part of the user object). */
  async setPasswordHashInTransaction(trx: Transaction, user: UserRecord, passwordHash: string, now: Date): Promise<void> {
    await store.updateUser(trx, user.project_id, user.id, { password_hash: passwordHash, updated_at: isoTime(now) });
  }

  /** Marks the address verified in the caller's transaction; event `user.email_verified` the first time only. */
  async markEmailVerifiedInTransaction(trx: Transaction, user: UserRecord, now: Date): Promise<UserRecord> {
    if (user.email_verified_at !== null) return user;
    const nowIso = isoTime(now);
    const row = await store.updateUser(trx, user.project_id, user.id, { email_verified_at: nowIso, updated_at: nowIso });
    if (row === undefined) throw new ApiError('token_invalid', 'The user of this token no longer exists.', { param: 'token' });
    await recordEvent(trx, {
      projectId: user.project_id,
      type: 'user.email_verified',
      data: { user_id: row.id, email: row.email },
      createdAt: nowIso,
    });
    return row;
  }

  /** The user with the provider accounts linked to it (linked-identities.ts). */
  async getWithIdentities(projectId: string, userId: string): Promise<UserWithIdentities> {
    return this.#identities.getWithIdentities(projectId, userId);
  }

  /** The user a provider account is linked to, in the caller's transaction (linked-identities.ts). */
  async findByIdentityInTransaction(
    trx: Transaction,
    input: { projectId: string; provider: string; subject: string },
  ): Promise<UserRecord | undefined> {
    return this.#identities.findByIdentityInTransaction(trx, input);
  }

  /** Links a provider account to a user, or records its use; one account per provider (linked-identities.ts). */
  async linkIdentityInTransaction(
    trx: Transaction,
    input: { user: UserRecord; provider: string; subject: string; email: string | null; now: Date },
  ): Promise<void> {
    return this.#identities.linkIdentityInTransaction(trx, input);
  }

  /** Unlinks the user's account of `provider` unless it is the last way to sign in (linked-identities.ts). */
  async unlinkIdentity(projectId: string, userId: string, provider: string, context: AuditContext): Promise<UserWithIdentities> {
    return this.#identities.unlinkIdentity(projectId, userId, provider, context);
  }

  async #changeInTransaction(trx: Transaction, current: UserRecord, changes: store.UserChanges, now: Date): Promise<User> {
    const nowIso = isoTime(now);
    const row = await store.updateUser(trx, current.project_id, current.id, { ...changes, updated_at: nowIso });
    if (row === undefined) throw new ApiError('resource_missing', `No user ${current.id}.`, { param: 'id' });
    await recordEvent(trx, {
      projectId: row.project_id,
      type: 'user.updated',
      data: { user_id: row.id, email: row.email },
      createdAt: nowIso,
    });
    return toUser(row);
  }
}

function userRecord(projectId: string, userId: string, action: AuditAction) {
  return { projectId, action, resource: { type: 'user', id: userId } };
}

function emailTaken(): ApiError {
  return new ApiError('email_taken', 'A user with this email already exists.', { param: 'email' });
}

/**
 * The provider accounts (OAuth, OpenID Connect, SSO) linked to a user: reading them with the user,
 * finding the user of one, linking one and unlinking one. `UsersService` (users.service.ts) answers
 * them through this class; which sign-in may link what is identity-linking.ts's rule.
 */
import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import * as identities from './identities.store.js';
import type { UserWithIdentities } from './users.schemas.js';
import type { UserRecord, UsersService } from './users.service.js';
import * as store from './users.store.js';
import { toIdentity, toUser } from './users.views.js';

export interface LinkedIdentitiesOptions {
  readonly db: Db;
  readonly audit: AuditService;
  /** For the user's row (`getRecord`: the row, or 404). */
  readonly users: UsersService;
}

export class LinkedIdentities {
  readonly #db: Db;
  readonly #audit: AuditService;
  readonly #users: UsersService;

  constructor(options: LinkedIdentitiesOptions) {
    this.#db = options.db;
    this.#audit = options.audit;
    this.#users = options.users;
  }

  /** The user with the provider accounts linked to it. */
  async getWithIdentities(projectId: string, userId: string): Promise<UserWithIdentities> {
    const user = await this.#users.getRecord(projectId, userId);
    const rows = await identities.listIdentities(this.#db.kysely, projectId, userId);
    return { ...toUser(user), identities: rows.map(toIdentity) };
  }

  /** The user a provider account is linked to, in the caller's transaction. */
  async findByIdentityInTransaction(
    trx: Transaction,
    input: { projectId: string; provider: string; subject: string },
  ): Promise<UserRecord | undefined> {
    const identity = await identities.findIdentity(trx, input.projectId, input.provider, input.subject);
    return identity === undefined ? undefined : store.findUser(trx, input.projectId, identity.user_id);
  }

  /**
   * Links a provider account to a user, or records its use when it is linked already. A user has at
   * most one account per provider: another one → 409 `identity_already_linked`.
   */
  async linkIdentityInTransaction(
    trx: Transaction,
    input: { user: UserRecord; provider: string; subject: string; email: string | null; now: Date },
  ): Promise<void> {
    const { user, provider, subject } = input;
    const nowIso = isoTime(input.now);
    const existing = await identities.findIdentity(trx, user.project_id, provider, subject);
    if (existing !== undefined) {
      if (existing.user_id !== user.id) throw new Error(`identity ${provider}/${subject} belongs to another user`);
      await identities.touchIdentity(trx, user.project_id, provider, subject, { email: input.email, last_used_at: nowIso });
      return;
    }
    const taken = (await identities.listIdentities(trx, user.project_id, user.id)).some((row) => row.provider === provider);
    if (taken) throw identityAlreadyLinked(provider);
    try {
      await identities.insertIdentity(trx, {
        project_id: user.project_id,
        provider,
        subject,
        user_id: user.id,
        email: input.email,
        created_at: nowIso,
        last_used_at: nowIso,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw identityAlreadyLinked(provider);
      throw error;
    }
  }

  /**
   * Unlinks the user's account of `provider`, only when the user keeps another way to sign in (a
   * password or another provider); otherwise 409 `identity_last_sign_in_method`. Serializable, so
   * two unlinks at once cannot both take away the last two ways. Audited as `user.identity_unlink`
   * with the provider (never the account's subject or a token); a refusal is recorded with its code.
   */
  async unlinkIdentity(projectId: string, userId: string, provider: string, context: AuditContext): Promise<UserWithIdentities> {
    const record: AuditRecord = {
      projectId,
      action: 'user.identity_unlink',
      resource: { type: 'user', id: userId },
      changes: { provider },
    };
    return this.#audit.recordingRefusals(context, record, () =>
      inTransaction(
        this.#db,
        async (trx) => {
          const user = await this.#users.getRecord(projectId, userId, trx);
          const rows = await identities.listIdentities(trx, projectId, userId);
          if (!rows.some((row) => row.provider === provider)) {
            throw new ApiError('resource_missing', `User ${userId} has no ${provider} identity.`, { param: 'provider' });
          }
          const others = rows.filter((row) => row.provider !== provider);
          if (user.password_hash === null && others.length === 0) {
            throw new ApiError(
              'identity_last_sign_in_method',
              `The ${provider} identity is the only way user ${userId} can sign in; set a password or link another provider first.`,
              { param: 'provider' },
            );
          }
          await identities.deleteIdentity(trx, projectId, userId, provider);
          await this.#audit.record(trx, context, record);
          return { ...toUser(user), identities: others.map(toIdentity) };
        },
        { isolation: 'serializable' },
      ),
    );
  }
}

function identityAlreadyLinked(provider: string): ApiError {
  return new ApiError('identity_already_linked', `This user already has another ${provider} account linked.`);
}

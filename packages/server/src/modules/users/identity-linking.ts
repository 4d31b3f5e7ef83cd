import type { Db } from '../../db/database.js';
import { rowLockFor, type Transaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditService } from '../audit/audit.service.js';
import * as identities from './identities.store.js';
import type { NormalizedEmail, UserRecord, UserSessionRevocation, UsersService } from './users.service.js';
import * as store from './users.store.js';

/**
 * The one identity-linking rule (docs/adr/0014-identity-linking.md): what a sign-in that meets an
 * address may do to the user who has it. Every flow that can meet an existing account by email
 * calls `signInInTransaction`: password sign-up, OAuth and OpenID Connect, enterprise SSO, and the
 * email-code and passkey flows when they come.
 *
 * 1. A provider account already linked signs its user in.
 * 2. An address nobody has makes a new user; verified only when the sign-in proves the address.
 * 3. An address a user has, with a sign-in that does NOT prove it: 409 `email_taken`. Nothing is
 *    linked or verified.
 * 4. An address a user has VERIFIED, with a sign-in that proves it: linked to that user.
 * 5. An address a user has NOT verified, with a sign-in that proves it: the prover claims the
 *    account. Whatever the unproven holder could sign in with goes (the password, every linked
 *    identity, every passkey), every session is revoked (reason `password_reset`), the address is marked verified,
 *    the account is linked, and the audit log records `user.email_claim`.
 */

/** How a person signs in; names the flow in refusals and in the audit log. */
export type SignInMethod = 'password' | 'oauth' | 'sso' | 'email_code' | 'passkey';

export interface SignInAttempt {
  readonly projectId: string;
  readonly method: SignInMethod;
  /** The provider account the sign-in came with (an OAuth provider key, `sso:<connection id>`), if any. */
  readonly account?: { readonly provider: string; readonly subject: string } | undefined;
  /** The address the sign-in asserts; undefined when the provider shared none. */
  readonly email: NormalizedEmail | undefined;
  /**
   * True only when the sign-in itself shows that the person controls `email` now: a provider's
   * `email_verified: true`, GitHub's verified address, an organization's SSO connection for its
   * domain (unless its IdP says `email_verified: false`), an emailed code. Never a password.
   */
  readonly emailProven: boolean;
  /** A new user's name and password hash. */
  readonly name: string;
  readonly passwordHash: string | null;
  /** The refusal when the sign-in shares no address and its account is not linked yet. */
  readonly withoutEmail?: ApiError | undefined;
  readonly now: Date;
  readonly context: AuditContext;
}

export interface SignedInUser {
  readonly user: UserRecord;
  readonly created: boolean;
  /** True when the sign-in claimed an account whose address had never been proven (rule 5). */
  readonly claimed: boolean;
}

export interface IdentityLinkingOptions {
  readonly db: Db;
  readonly users: UsersService;
  readonly sessions: UserSessionRevocation;
  readonly audit: AuditService;
}

export class IdentityLinking {
  readonly #db: Db;
  readonly #users: UsersService;
  readonly #sessions: UserSessionRevocation;
  readonly #audit: AuditService;

  constructor(options: IdentityLinkingOptions) {
    this.#db = options.db;
    this.#users = options.users;
    this.#sessions = options.sessions;
    this.#audit = options.audit;
  }

  /**
   * The user a sign-in is for, found, created, linked or claimed in the caller's transaction. A
   * banned user is refused (403 `user_banned`) before anything about it changes. The caller makes
   * the session and records its own sign-in entry.
   */
  async signInInTransaction(trx: Transaction, attempt: SignInAttempt): Promise<SignedInUser> {
    const { projectId, account, email, now } = attempt;
    if (account !== undefined) {
      const known = await this.#users.findByIdentityInTransaction(trx, { projectId, ...account });
      if (known !== undefined) {
        refuseBanned(known);
        // The account made or was linked to this user; a proof of the same address now verifies it.
        const user =
          attempt.emailProven && email !== undefined && email.emailKey === known.email_key
            ? await this.#users.markEmailVerifiedInTransaction(trx, known, now)
            : known;
        await this.#link(trx, user, attempt);
        return { user, created: false, claimed: false };
      }
    }
    if (email === undefined) {
      throw attempt.withoutEmail ?? new ApiError('parameter_missing', 'A sign-in needs an email address.', { param: 'email' });
    }
    const existing = await this.#users.findRecordByEmail(projectId, email, trx);
    if (existing === undefined) {
      let user = await this.#users.createInTransaction(trx, {
        projectId,
        email,
        name: attempt.name,
        passwordHash: attempt.passwordHash,
        now,
      });
      if (attempt.emailProven) user = await this.#users.markEmailVerifiedInTransaction(trx, user, now);
      await this.#link(trx, user, attempt);
      return { user, created: true, claimed: false };
    }
    if (!attempt.emailProven) throw emailTaken(attempt);
    refuseBanned(existing);
    // The row is locked and read again: a verification or another claim may have just committed.
    const current = await store.findUserLocked(trx, projectId, existing.id, rowLockFor(this.#db.dialect));
    if (current === undefined) throw emailTaken(attempt);
    if (current.email_verified_at !== null) {
      await this.#link(trx, current, attempt);
      return { user: current, created: false, claimed: false };
    }
    const user = await this.#claim(trx, current, attempt);
    await this.#link(trx, user, attempt);
    return { user, created: false, claimed: true };
  }

  /**
   * Rule 5: nothing the unproven holder set up survives. A user whose address is unverified has
   * only credentials that never proved it (a linking identity that proves it verifies the address),
   * so every one of them goes, with what other modules keep for the user (the users service's claim
   * steps, which they register): passkeys, and second factors, since an authenticator the unproven
   * holder set up would otherwise stand between the address's owner and the account.
   */
  async #claim(trx: Transaction, user: UserRecord, attempt: SignInAttempt): Promise<UserRecord> {
    const nowIso = isoTime(attempt.now);
    const passwordRemoved = user.password_hash !== null;
    if (passwordRemoved) await store.updateUser(trx, user.project_id, user.id, { password_hash: null, updated_at: nowIso });
    const removedProviders = await identities.deleteIdentitiesOfUser(trx, user.project_id, user.id);
    const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, {
      projectId: user.project_id,
      userId: user.id,
      reason: 'password_reset',
      now: attempt.now,
    });
    const removedElsewhere = await this.#users.runClaimStepsInTransaction(trx, {
      projectId: user.project_id,
      userId: user.id,
      now: attempt.now,
      context: attempt.context,
    });
    const verified = await this.#users.markEmailVerifiedInTransaction(trx, { ...user, password_hash: null }, attempt.now);
    await this.#audit.record(trx, attempt.context, {
      projectId: user.project_id,
      action: 'user.email_claim',
      resource: { type: 'user', id: user.id },
      changes: {
        method: attempt.method,
        provider: attempt.account?.provider ?? null,
        password_removed: passwordRemoved,
        identities_removed: removedProviders.join(','),
        sessions_revoked: revoked.length,
        ...removedElsewhere,
      },
      createdAt: nowIso,
    });
    return verified;
  }

  async #link(trx: Transaction, user: UserRecord, attempt: SignInAttempt): Promise<void> {
    if (attempt.account === undefined) return;
    await this.#users.linkIdentityInTransaction(trx, {
      user,
      provider: attempt.account.provider,
      subject: attempt.account.subject,
      email: attempt.email?.email ?? null,
      now: attempt.now,
    });
  }
}

function refuseBanned(user: UserRecord): void {
  if (user.banned_at !== null) throw new ApiError('user_banned', 'This user is banned and cannot log in.');
}

function emailTaken(attempt: SignInAttempt): ApiError {
  if (attempt.method === 'password') {
    return new ApiError('email_taken', 'A user with this email already exists.', { param: 'email' });
  }
  const source = attempt.account === undefined ? 'this sign-in' : attempt.account.provider;
  return new ApiError(
    'email_taken',
    `A user with this email already exists; ${source} did not prove the address is verified, so it is not linked to that user.`,
  );
}

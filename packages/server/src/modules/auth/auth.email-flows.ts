/**
 * The auth flows that run through an emailed link (docs/api.md section 4): verifying an address,
 * resending the verification email, asking for a reset email and resetting the password with its
 * token. `AuthService` (auth.service.ts) answers them through this class.
 */
import type { Db } from '../../db/database.js';
import type { EmailTokenPurpose } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { type RateLimiter, type RateLimitRule, takeOrRefuse } from '../../lib/rate-limit.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { queueEmail } from '../email/email.service.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { normalizeEmail, queueSecurityNotice, toUser, type UsersService } from '../users/users.service.js';
import type { User } from '../users/users.schemas.js';
import { EMAIL_SHOWN_LENGTH_MAX, userRecord } from './auth.common.js';
import { EMAIL_TOKEN_PATTERN, PASSWORD_RESET_TEMPLATE, VERIFY_EMAIL_TEMPLATE } from './auth.emails.js';
import * as tokens from './email-tokens.store.js';
import { checkPasswordStrength, hashPassword } from './passwords.js';

/** Verification emails resent per user: 2 at once, then one every 2 minutes. */
export const VERIFICATION_RESEND_RULE: RateLimitRule = { perSecond: 1 / 120, burst: 2 };
/** Reset emails per address: 3 at once, then one every 5 minutes. Past it, forgot still answers 202. */
export const PASSWORD_FORGOT_RULE: RateLimitRule = { perSecond: 1 / 300, burst: 3 };

export interface AuthEmailFlowsOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  readonly rateLimiter: RateLimiter;
  readonly audit: AuditService;
}

export class AuthEmailFlows {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #sessions: SessionsService;
  readonly #rateLimiter: RateLimiter;
  readonly #audit: AuditService;

  constructor(options: AuthEmailFlowsOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#sessions = options.sessions;
    this.#rateLimiter = options.rateLimiter;
    this.#audit = options.audit;
  }

  /**
   * Uses a verification token: the address is verified, `user.email_verified` sent once, and every
   * verification link of the user dies.
   * `projectId` is undefined for the public link, whose token alone names its project.
   */
  async verifyEmail(projectId: string | undefined, token: string, context: AuditContext): Promise<User> {
    // A refused public link names no project: there is no log to record it in.
    if (projectId === undefined) return this.#verifyEmail(undefined, token, context);
    return this.#audit.recordingRefusals(context, userRecord(projectId, null, 'user.email_verify'), () =>
      this.#verifyEmail(projectId, token, context),
    );
  }

  async #verifyEmail(projectId: string | undefined, token: string, context: AuditContext): Promise<User> {
    const tokenHash = this.#checkTokenShape(token);
    return inTransaction(this.#db, async (trx) => {
      const row = await this.#usableToken(trx, tokenHash, 'verify_email', projectId);
      const user = await this.#users.findRecord(row.project_id, row.user_id, trx);
      if (user === undefined || user.email !== row.email) throw tokenInvalid();
      const now = this.#clock.now();
      if (!(await tokens.useEmailToken(trx, row.project_id, tokenHash, isoTime(now)))) throw tokenInvalid();
      // The other verification links sent to this user are done with too.
      await tokens.useAllEmailTokens(trx, row.project_id, user.id, 'verify_email', isoTime(now));
      await this.#audit.record(trx, context, {
        ...userRecord(row.project_id, user.id, 'user.email_verify'),
        changes: { verified_before: user.email_verified_at !== null },
        createdAt: isoTime(now),
      });
      return toUser(await this.#users.markEmailVerifiedInTransaction(trx, user, now));
    });
  }

  /** Queues another verification email; rate limited per user. Nothing is sent to a verified address. */
  async resendVerification(projectId: string, userId: string, context: AuditContext): Promise<void> {
    const record = userRecord(projectId, userId, 'user.verification_email_send');
    await this.#audit.recordingRefusals(context, record, async () => {
      const user = await this.#users.getRecord(projectId, userId);
      await takeOrRefuse(this.#rateLimiter, `verify-email:${projectId}:${userId}`, VERIFICATION_RESEND_RULE);
      if (user.email_verified_at !== null || user.banned_at !== null) {
        await this.#audit.recordAlone(context, { ...record, changes: { email_queued: false } });
        return;
      }
      await inTransaction(this.#db, async (trx) => {
        await queueEmail(trx, {
          projectId,
          template: VERIFY_EMAIL_TEMPLATE,
          recipient: user.email,
          data: { user_id: user.id },
          now: isoTime(this.#clock.now()),
        });
        await this.#audit.record(trx, context, { ...record, changes: { email_queued: true } });
      });
    });
  }

  /**
   * Queues a reset email when the address belongs to a user. The caller answers 202 in every case,
   * so the answer never tells whether an account exists.
   */
  async forgotPassword(projectId: string, rawEmail: string, context: AuditContext): Promise<void> {
    // The answer hides whether the account exists; the operator's log does not need to.
    const record = (userId: string | null, emailQueued: boolean): AuditRecord => ({
      ...userRecord(projectId, userId, 'user.password_forgot'),
      changes: { email: rawEmail.trim().slice(0, EMAIL_SHOWN_LENGTH_MAX), email_queued: emailQueued },
    });
    await this.#audit.recordingRefusals(context, record(null, false), async () => {
      const email = normalizeEmail(rawEmail);
      const decision = await this.#rateLimiter.consume(`password-forgot:${projectId}:${email.emailKey}`, PASSWORD_FORGOT_RULE);
      const user = decision.allowed ? await this.#users.findRecordByEmail(projectId, email) : undefined;
      if (user === undefined || user.banned_at !== null) {
        await this.#audit.recordAlone(context, record(user?.id ?? null, false));
        return;
      }
      await inTransaction(this.#db, async (trx) => {
        await queueEmail(trx, {
          projectId,
          template: PASSWORD_RESET_TEMPLATE,
          recipient: user.email,
          data: { user_id: user.id },
          now: isoTime(this.#clock.now()),
        });
        await this.#audit.record(trx, context, record(user.id, true));
      });
    });
  }

  /**
   * Sets a new password from a reset token. Every session of the user is revoked (reason
   * `password_reset`), every other reset link dies, and the address counts as verified: the token
   * came through it.
   */
  async resetPassword(projectId: string, input: { token: string; password: string }, context: AuditContext): Promise<User> {
    return this.#audit.recordingRefusals(context, userRecord(projectId, null, 'user.password_reset'), () =>
      this.#resetPassword(projectId, input, context),
    );
  }

  async #resetPassword(projectId: string, input: { token: string; password: string }, context: AuditContext): Promise<User> {
    const tokenHash = this.#checkTokenShape(input.token);
    await this.#usableToken(this.#db.kysely, tokenHash, 'password_reset', projectId);
    checkPasswordStrength(input.password, 'password');
    const passwordHash = await hashPassword(input.password);
    return inTransaction(this.#db, async (trx) => {
      const row = await this.#usableToken(trx, tokenHash, 'password_reset', projectId);
      const now = this.#clock.now();
      const nowIso = isoTime(now);
      const user = await this.#users.findRecord(projectId, row.user_id, trx);
      if (user === undefined || user.email !== row.email) throw tokenInvalid();
      if (!(await tokens.useEmailToken(trx, projectId, tokenHash, nowIso))) throw tokenInvalid();
      await tokens.useAllEmailTokens(trx, projectId, user.id, 'password_reset', nowIso);
      await this.#users.setPasswordHashInTransaction(trx, user, passwordHash, now);
      const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, {
        projectId,
        userId: user.id,
        reason: 'password_reset',
        now,
      });
      await this.#audit.record(trx, context, {
        ...userRecord(projectId, user.id, 'user.password_reset'),
        changes: { sessions_revoked: revoked.length },
        createdAt: nowIso,
      });
      await queueSecurityNotice(trx, { projectId, user, change: 'password_reset', changedAt: nowIso });
      const verified = await this.#users.markEmailVerifiedInTransaction(trx, user, now);
      return toUser({ ...verified, updated_at: nowIso });
    });
  }

  #checkTokenShape(token: string): string {
    if (!EMAIL_TOKEN_PATTERN.test(token)) throw tokenInvalid();
    return sha256Hex(token);
  }

  /** The token's row when it exists, is unused and unexpired; otherwise the matching refusal. */
  async #usableToken(
    executor: Db['kysely'],
    tokenHash: string,
    purpose: EmailTokenPurpose,
    projectId: string | undefined,
  ): Promise<tokens.EmailTokenRow> {
    const row = await tokens.findEmailToken(executor, tokenHash, purpose, projectId);
    if (row === undefined || row.used_at !== null) throw tokenInvalid();
    if (row.expires_at <= isoTime(this.#clock.now())) {
      throw new ApiError(
        'token_expired',
        purpose === 'verify_email'
          ? 'This verification link has expired; ask for a new one.'
          : 'This reset link has expired; ask for a new one.',
        { param: 'token' },
      );
    }
    return row;
  }
}

function tokenInvalid(): ApiError {
  return new ApiError('token_invalid', 'This link or token is not valid, or was already used.', { param: 'token' });
}

import type { Db } from '../../db/database.js';
import type { EmailTokenPurpose } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Principal } from '../../lib/principal.js';
import type { RateLimiter, RateLimitRule } from '../../lib/rate-limit.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { queueEmail } from '../email/email.service.js';
import type { SessionCheck, SessionClient, SessionPrincipal, SessionsService } from '../sessions/sessions.service.js';
import type { IssuedSession, SessionInfo } from '../sessions/sessions.schemas.js';
import { type SignInGate, signInChanges, type SignInResult, signInResult } from '../mfa/mfa.service.js';
import { IdentityLinking, type NormalizedEmail, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import { NAME_LENGTH_MAX, type User } from '../users/users.schemas.js';
import { EMAIL_TOKEN_PATTERN, PASSWORD_RESET_TEMPLATE, VERIFY_EMAIL_TEMPLATE } from './auth.emails.js';
import * as tokens from './email-tokens.store.js';
import { type LoginThrottle, type LoginThrottleRule, type ThrottledAttemptLimits, throttledAttempt } from '../../lib/login-throttle.js';
import { checkPasswordStrength, createDummyPasswordHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';

/** Sign-ups per project and client IP: 20 at once, then one a second. */
export const SIGNUP_RATE_RULE: RateLimitRule = { perSecond: 1, burst: 20 };
/** Verification emails resent per user: 2 at once, then one every 2 minutes. */
export const VERIFICATION_RESEND_RULE: RateLimitRule = { perSecond: 1 / 120, burst: 2 };
/** Reset emails per address: 3 at once, then one every 5 minutes. Past it, forgot still answers 202. */
export const PASSWORD_FORGOT_RULE: RateLimitRule = { perSecond: 1 / 300, burst: 3 };

/** Failed log-ins per project, email and end-user address: 10 per 15 minutes. */
export const LOGIN_FAILURES_PER_ADDRESS: LoginThrottleRule = { failuresMax: 10, windowSeconds: 15 * 60 };
/** Failed log-ins per project and email from all addresses together: 100 per 15 minutes. */
export const LOGIN_FAILURES_PER_EMAIL: LoginThrottleRule = { failuresMax: 100, windowSeconds: 15 * 60 };

const INVALID_CREDENTIALS_MESSAGE = 'The email or password is incorrect.';
/** An address tried at log in or forgot, as the audit entry keeps it: at most the longest valid address. */
const EMAIL_SHOWN_LENGTH_MAX = 254;

export interface AuthServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  /** Turns the checked password into a session, or a second-factor challenge. */
  readonly gate: SignInGate;
  readonly loginThrottle: LoginThrottle;
  /** The request rate limiter (memory or Redis), for sign-up and email sends. */
  readonly rateLimiter: RateLimiter;
  readonly audit: AuditService;
  /** False turns the sign-up limit off, with the per-IP request limit (`RATE_LIMIT_IP_PER_SECOND=0`). */
  readonly signupLimited: boolean;
}

export interface UserAndSession {
  readonly user: User;
  readonly session: IssuedSession;
}

/**
 * Email and password authentication: sign up, log in, refresh, log out, email verification and
 * password reset. Changes go through the users and sessions services in one transaction with their
 * events; emails are queued in that transaction and sent after it commits.
 */
export class AuthService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #sessions: SessionsService;
  readonly #gate: SignInGate;
  readonly #loginThrottle: LoginThrottle;
  readonly #rateLimiter: RateLimiter;
  readonly #audit: AuditService;
  readonly #signupLimited: boolean;
  readonly #dummyPasswordHash: Promise<string>;
  readonly #linking: IdentityLinking;

  constructor(options: AuthServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#sessions = options.sessions;
    this.#gate = options.gate;
    this.#loginThrottle = options.loginThrottle;
    this.#rateLimiter = options.rateLimiter;
    this.#audit = options.audit;
    this.#signupLimited = options.signupLimited;
    this.#dummyPasswordHash = createDummyPasswordHash();
    this.#linking = new IdentityLinking(options);
  }

  async signup(
    projectId: string,
    input: { email: string; password: string; name?: string | undefined },
    client: SessionClient,
    context: AuditContext,
  ): Promise<UserAndSession> {
    return this.#audit.recordingRefusals(context, userRecord(projectId, null, 'user.signup'), () =>
      this.#signup(projectId, input, client, context),
    );
  }

  async #signup(
    projectId: string,
    input: { email: string; password: string; name?: string | undefined },
    client: SessionClient,
    context: AuditContext,
  ): Promise<UserAndSession> {
    const email = normalizeEmail(input.email);
    const name = (input.name ?? '').trim();
    if (name.length > NAME_LENGTH_MAX)
      throw new ApiError('parameter_invalid', `name is at most ${NAME_LENGTH_MAX} characters.`, { param: 'name' });
    checkPasswordStrength(input.password, 'password');
    if (this.#signupLimited) await this.#limit(`signup:${projectId}:${client.ip ?? ''}`, SIGNUP_RATE_RULE);
    if ((await this.#users.findRecordByEmail(projectId, email)) !== undefined) {
      throw new ApiError('email_taken', 'A user with this email already exists.', { param: 'email' });
    }
    // Hashing takes tens of milliseconds; it happens before the transaction, never while holding it.
    const passwordHash = await hashPassword(input.password);
    return inTransaction(this.#db, async (trx) => {
      const now = this.#clock.now();
      // A password proves nothing about the address: an address in use is 409 `email_taken`
      // (docs/adr/0014-identity-linking.md).
      const { user } = await this.#linking.signInInTransaction(trx, {
        projectId,
        method: 'password',
        email,
        emailProven: false,
        name,
        passwordHash,
        now,
        context,
      });
      const issued = await this.#sessions.createInTransaction(trx, { projectId, userId: user.id, client, now });
      await queueEmail(trx, {
        projectId,
        template: VERIFY_EMAIL_TEMPLATE,
        recipient: user.email,
        data: { user_id: user.id },
        now: isoTime(now),
      });
      await this.#audit.record(trx, context, {
        ...userRecord(projectId, user.id, 'user.signup'),
        changes: { session_id: issued.name },
        createdAt: isoTime(now),
      });
      return { user: toUser(user), session: issued.session };
    });
  }

  /**
   * A wrong email and a wrong password answer alike, in about the same time (an unknown email is
   * checked against a dummy hash). Each attempt takes its throttle slots before the password is
   * checked, so a refused attempt learns nothing and concurrent guesses cannot pass the limits;
   * only failures keep their slots (docs/architecture.md, "Log-in throttling").
   */
  async login(
    projectId: string,
    input: { email: string; password: string },
    client: SessionClient,
    context: AuditContext,
  ): Promise<SignInResult> {
    // A refused log-in names the address tried (never the password) and the user, when it exists.
    let userId: string | null = null;
    const refused = (): AuditRecord => ({
      ...userRecord(projectId, userId, 'user.login'),
      changes: { email: input.email.trim().slice(0, EMAIL_SHOWN_LENGTH_MAX) },
    });
    return this.#audit.recordingRefusals(context, refused, () =>
      this.#login(projectId, input, client, context, (id) => {
        userId = id;
      }),
    );
  }

  async #login(
    projectId: string,
    input: { email: string; password: string },
    client: SessionClient,
    context: AuditContext,
    found: (userId: string) => void,
  ): Promise<SignInResult> {
    let email: NormalizedEmail | undefined;
    try {
      email = normalizeEmail(input.email);
    } catch {
      email = undefined;
    }
    const throttle = loginThrottleLimits(projectId, email?.emailKey ?? input.email.trim().toLowerCase(), client.ip);
    const user = await this.#throttled(throttle, async () => {
      const record = email === undefined ? undefined : await this.#users.findRecordByEmail(projectId, email);
      if (record !== undefined) found(record.id);
      const passwordMatches = await verifyPassword(record?.password_hash ?? (await this.#dummyPasswordHash), input.password);
      return record !== undefined && record.password_hash !== null && passwordMatches ? record : undefined;
    });
    if (user === undefined || user.password_hash === null) throw new ApiError('invalid_credentials', INVALID_CREDENTIALS_MESSAGE);
    if (user.banned_at !== null) throw new ApiError('user_banned', 'This user is banned and cannot log in.');
    const rehashed = needsRehash(user.password_hash) ? await hashPassword(input.password) : undefined;
    return inTransaction(this.#db, async (trx) => {
      // The password was checked before this transaction. Regression: a log in whose check finished
      // just before the account was taken over by its address's owner (its password removed, its
      // sessions revoked) still got a session. Read the row again, locked, and insist it is unchanged.
      const current = await this.#users.findRecordLockedInTransaction(trx, projectId, user.id);
      if (current === undefined || current.password_hash !== user.password_hash) {
        throw new ApiError('invalid_credentials', INVALID_CREDENTIALS_MESSAGE);
      }
      if (current.banned_at !== null) throw new ApiError('user_banned', 'This user is banned and cannot log in.');
      const now = this.#clock.now();
      if (rehashed !== undefined) await this.#users.setPasswordHashInTransaction(trx, user, rehashed, now);
      // A user with an authenticator gets a challenge instead of a session (docs/adr/0016-mfa.md).
      const outcome = await this.#gate.afterFirstFactorInTransaction(trx, { projectId, userId: user.id, client, now });
      await this.#audit.record(trx, context, {
        ...userRecord(projectId, user.id, 'user.login'),
        changes: signInChanges(outcome),
        createdAt: isoTime(now),
      });
      return signInResult(toUser(user), outcome);
    });
  }

  async refresh(projectId: string, refreshToken: string, client: SessionClient, context: AuditContext): Promise<UserAndSession> {
    const issued = await this.#sessions.refresh(projectId, refreshToken, client, context);
    const user = await this.#users.findRecord(projectId, issued.userId);
    if (user === undefined)
      throw new ApiError('refresh_token_invalid', 'The user of this refresh token no longer exists.', { param: 'refresh_token' });
    return { user: toUser(user), session: issued.session };
  }

  async validate(
    projectId: string,
    token: string,
  ): Promise<{ valid: true; user: User; session: SessionInfo } | Extract<SessionCheck, { valid: false }>> {
    const check = await this.#sessions.checkWithUser(projectId, token);
    if (!check.valid) return check;
    return { valid: true, user: toUser(check.user), session: check.session };
  }

  /** With a session: ends it. With a secret key: ends the session named in the body. */
  async logout(principal: Principal, sessionId: string | undefined, context: AuditContext): Promise<void> {
    if (principal.kind === 'session') {
      await this.#sessions.revoke(principal.projectId, principal.sessionName, 'logout', { audit: context });
      return;
    }
    if (sessionId === undefined)
      throw new ApiError('parameter_missing', 'With a secret key, name the session to end: {"session_id": "svc_ses_…"}.', {
        param: 'session_id',
      });
    await this.#sessions.revoke(principal.projectId, sessionId, 'logout', { param: 'session_id', audit: context });
  }

  async listUserSessions(projectId: string, userId: string, query: { limit?: number | undefined; starting_after?: string | undefined }) {
    await this.#users.getRecord(projectId, userId);
    return this.#sessions.listForUser(projectId, userId, query);
  }

  async revokeUserSessions(
    projectId: string,
    userId: string,
    context: AuditContext,
  ): Promise<{ object: 'list'; data: SessionInfo[]; has_more: false }> {
    const record = userRecord(projectId, userId, 'user.sessions_revoke');
    const data = await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        await this.#users.getRecord(projectId, userId, trx);
        const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, {
          projectId,
          userId,
          reason: 'revoked',
          now: this.#clock.now(),
        });
        await this.#audit.record(trx, context, { ...record, changes: { sessions_revoked: revoked.length } });
        return revoked;
      }),
    );
    return { object: 'list', data, has_more: false };
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
      await this.#limit(`verify-email:${projectId}:${userId}`, VERIFICATION_RESEND_RULE);
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
      const verified = await this.#users.markEmailVerifiedInTransaction(trx, user, now);
      return toUser({ ...verified, updated_at: nowIso });
    });
  }

  /**
   * Changes the password of the session's user, given the current one. The user's other sessions
   * are revoked (reason `password_reset`); this one stays. Wrong current passwords count against
   * the log-in throttle of that email and IP.
   */
  async changePassword(
    principal: SessionPrincipal,
    input: { current_password: string; new_password: string },
    client: SessionClient,
    context: AuditContext,
  ): Promise<User> {
    return this.#audit.recordingRefusals(context, userRecord(principal.projectId, principal.userId, 'user.password_change'), () =>
      this.#changePassword(principal, input, client, context),
    );
  }

  async #changePassword(
    principal: SessionPrincipal,
    input: { current_password: string; new_password: string },
    client: SessionClient,
    context: AuditContext,
  ): Promise<User> {
    const { projectId, userId } = principal;
    const user = await this.#users.getRecord(projectId, userId);
    const throttle = loginThrottleLimits(projectId, user.email_key, client.ip);
    const currentPasswordMatches = await this.#throttled(throttle, async () =>
      user.password_hash !== null && (await verifyPassword(user.password_hash, input.current_password)) ? true : undefined,
    );
    if (currentPasswordMatches === undefined)
      throw new ApiError('invalid_credentials', 'The current password is incorrect.', { param: 'current_password' });
    checkPasswordStrength(input.new_password, 'new_password');
    const passwordHash = await hashPassword(input.new_password);
    return inTransaction(this.#db, async (trx) => {
      const now = this.#clock.now();
      await this.#users.setPasswordHashInTransaction(trx, user, passwordHash, now);
      const revoked = await this.#sessions.revokeAllForUserInTransaction(trx, {
        projectId,
        userId,
        reason: 'password_reset',
        now,
        exceptSessionId: principal.sessionName,
      });
      await this.#audit.record(trx, context, {
        ...userRecord(projectId, userId, 'user.password_change'),
        changes: { sessions_revoked: revoked.length },
        createdAt: isoTime(now),
      });
      return toUser({ ...user, updated_at: isoTime(now) });
    });
  }

  /** One password check under the log-in throttle (login-throttle.ts, `throttledAttempt`). */
  #throttled<T>(limits: LoginThrottleLimits, check: () => Promise<T | undefined>): Promise<T | undefined> {
    return throttledAttempt(this.#loginThrottle, limits, check);
  }

  async #limit(bucket: string, rule: RateLimitRule): Promise<void> {
    const decision = await this.#rateLimiter.consume(bucket, rule);
    if (!decision.allowed) {
      throw new ApiError('rate_limited', `Too many requests; retry in ${decision.retryAfterSeconds} s.`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
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

type LoginThrottleLimits = ThrottledAttemptLimits;

/**
 * The two limits of a log-in attempt, per project and email: per end-user address, and across all
 * addresses. Both keys share the `{project:email}` hash tag, so a Redis Cluster keeps them on one
 * node, where one script can check and count them together.
 */
function loginThrottleLimits(projectId: string, emailKey: string, ip: string | undefined): LoginThrottleLimits {
  const emailTag = `{${projectId}:${sha256Hex(emailKey)}}`;
  return {
    narrow: { key: `${emailTag}:ip:${ip ?? ''}`, ...LOGIN_FAILURES_PER_ADDRESS },
    wide: { key: `${emailTag}:all`, ...LOGIN_FAILURES_PER_EMAIL },
  };
}

function userRecord(projectId: string, userId: string | null, action: AuditRecord['action']): AuditRecord {
  return { projectId, action, resource: { type: 'user', id: userId } };
}

function tokenInvalid(): ApiError {
  return new ApiError('token_invalid', 'This link or token is not valid, or was already used.', { param: 'token' });
}

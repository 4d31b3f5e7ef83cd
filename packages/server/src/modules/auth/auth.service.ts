import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import type { Principal } from '../../lib/principal.js';
import { type RateLimiter, type RateLimitRule, takeOrRefuse } from '../../lib/rate-limit.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { limitAddress } from '../../lib/client-address.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { queueEmail } from '../email/email.service.js';
import type { SessionCheck, SessionClient, SessionPrincipal, SessionsService } from '../sessions/sessions.service.js';
import type { IssuedSession, SessionInfo } from '../sessions/sessions.schemas.js';
import { type SignInGate, signInChanges, type SignInResult, signInResult } from '../mfa/mfa.service.js';
import {
  IdentityLinking,
  type NormalizedEmail,
  normalizeEmail,
  refuseHiddenEmailCharacters,
  queueSecurityNotice,
  toUser,
  type UsersService,
} from '../users/users.service.js';
import { NAME_LENGTH_MAX, type User } from '../users/users.schemas.js';
import { EMAIL_SHOWN_LENGTH_MAX, userRecord } from './auth.common.js';
import { AuthEmailFlows } from './auth.email-flows.js';
import { VERIFY_EMAIL_TEMPLATE } from './auth.emails.js';
import { type LoginThrottle, type LoginThrottleRule, type ThrottledAttemptLimits, throttledAttempt } from '../../lib/login-throttle.js';
import { checkPasswordStrength, createDummyPasswordHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';

export { PASSWORD_FORGOT_RULE, VERIFICATION_RESEND_RULE } from './auth.email-flows.js';

/** Sign-ups per project and client IP: 20 at once, then one a second. */
export const SIGNUP_RATE_RULE: RateLimitRule = { perSecond: 1, burst: 20 };

/** Failed log-ins per project, email and end-user address: 10 per 15 minutes. */
export const LOGIN_FAILURES_PER_ADDRESS: LoginThrottleRule = { failuresMax: 10, windowSeconds: 15 * 60 };
/** Failed log-ins per project and email from all addresses together: 100 per 15 minutes. */
export const LOGIN_FAILURES_PER_EMAIL: LoginThrottleRule = { failuresMax: 100, windowSeconds: 15 * 60 };

const INVALID_CREDENTIALS_MESSAGE = 'The email or password is incorrect.';

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
 * password reset (the emailed-link flows are `AuthEmailFlows`', auth.email-flows.ts). Changes go through the users and sessions services in one transaction with their
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
  readonly #emailFlows: AuthEmailFlows;

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
    this.#emailFlows = new AuthEmailFlows(options);
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
    if (this.#signupLimited) await takeOrRefuse(this.#rateLimiter, `signup:${projectId}:${limitAddress(client.ip)}`, SIGNUP_RATE_RULE);
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
      const issued = await this.#sessions.createInTransaction(trx, { projectId, userId: user.id, client, now, amr: ['pwd'] });
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
    // An address that cannot be a user's is wrong credentials below, but hidden characters are a 400 everywhere.
    refuseHiddenEmailCharacters(input.email);
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
      const outcome = await this.#gate.afterFirstFactorInTransaction(trx, { projectId, userId: user.id, client, now, amr: ['pwd'] });
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
  ): Promise<{ valid: true; user: User; session: SessionInfo; jwt: string } | Extract<SessionCheck, { valid: false }>> {
    const check = await this.#sessions.checkWithUser(projectId, token);
    if (!check.valid) return check;
    return { valid: true, user: toUser(check.user), session: check.session, jwt: check.jwt };
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

  /** Verifies an address with its token (auth.email-flows.ts); `projectId` undefined for the public link. */
  async verifyEmail(projectId: string | undefined, token: string, context: AuditContext): Promise<User> {
    return this.#emailFlows.verifyEmail(projectId, token, context);
  }

  /** Queues another verification email (auth.email-flows.ts). */
  async resendVerification(projectId: string, userId: string, context: AuditContext): Promise<void> {
    return this.#emailFlows.resendVerification(projectId, userId, context);
  }

  /** Queues a reset email when the address belongs to a user; the caller answers 202 either way (auth.email-flows.ts). */
  async forgotPassword(projectId: string, rawEmail: string, context: AuditContext): Promise<void> {
    return this.#emailFlows.forgotPassword(projectId, rawEmail, context);
  }

  /** Sets a new password from a reset token (auth.email-flows.ts). */
  async resetPassword(projectId: string, input: { token: string; password: string }, context: AuditContext): Promise<User> {
    return this.#emailFlows.resetPassword(projectId, input, context);
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
      await queueSecurityNotice(trx, { projectId, user, change: 'password_changed', changedAt: isoTime(now) });
      return toUser({ ...user, updated_at: isoTime(now) });
    });
  }

  /** One password check under the log-in throttle (login-throttle.ts, `throttledAttempt`). */
  #throttled<T>(limits: LoginThrottleLimits, check: () => Promise<T | undefined>): Promise<T | undefined> {
    return throttledAttempt(this.#loginThrottle, limits, check);
  }
}

type LoginThrottleLimits = ThrottledAttemptLimits;

/**
 * The two limits of a log-in attempt, per project and email: per end-user address (an IPv6 one by
 * its /64), and across all addresses; reauthentication counts on the same ones. Both keys share the
 * `{project:email}` hash tag, so a Redis Cluster keeps them on one node, where one script can check
 * and count them together.
 */
export function loginThrottleLimits(projectId: string, emailKey: string, ip: string | undefined): LoginThrottleLimits {
  const emailTag = `{${projectId}:${sha256Hex(emailKey)}}`;
  return {
    narrow: { key: `${emailTag}:ip:${limitAddress(ip)}`, ...LOGIN_FAILURES_PER_ADDRESS },
    wide: { key: `${emailTag}:all`, ...LOGIN_FAILURES_PER_EMAIL },
  };
}

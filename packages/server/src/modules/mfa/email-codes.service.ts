import { randomBytes, randomInt } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import type { RateLimiter, RateLimitRule } from '../../lib/rate-limit.js';
import { limitAddress } from '../../lib/client-address.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { queueEmail } from '../email/email.service.js';
import { type LoginThrottle, type LoginThrottleRule, throttledAttempt } from '../../lib/login-throttle.js';
import type { SessionClient, SessionsService } from '../sessions/sessions.service.js';
import { IdentityLinking, type NormalizedEmail, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import * as store from './email-codes.store.js';
import { type SignInGate, signInChanges, type SignInResult, signInResult } from './sign-in-gate.js';

export const EMAIL_CODE_TEMPLATE = 'email_code';
/** A code lives 10 minutes from when its email is written, and takes 5 tries (docs/api.md, "Email codes"). */
export const EMAIL_CODE_TTL_MS = 10 * 60 * 1000;
export const EMAIL_CODE_ATTEMPTS_MAX = 5;
const EMAIL_CODE_PATTERN = /^\d{6}$/;
/**
 * Codes live at once per project and address: asking for another never ends the ones already sent
 * (an email may arrive late, or in the wrong order), so past 3 nothing more is sent, and the answer
 * is still 202.
 */
export const EMAIL_CODES_LIVE_MAX = 3;
/** A request this soon after the address's latest one sends nothing (and still answers 202). */
export const EMAIL_CODE_RESEND_INTERVAL_MS = 60 * 1000;
/** Codes asked per project and end-user address: 20 at once, then one every 6 seconds; past it, 429. */
export const EMAIL_CODE_SEND_PER_IP_RULE: RateLimitRule = { perSecond: 1 / 6, burst: 20 };
/** Wrong codes per project, address and end-user address: 10 per 15 minutes, as log in. */
export const EMAIL_CODE_FAILURES_PER_ADDRESS: LoginThrottleRule = { failuresMax: 10, windowSeconds: 15 * 60 };
/**
 * Wrong codes per project and address from all end-user addresses: 100 per 15 minutes, as log in,
 * so that guesses from elsewhere cannot lock the owner out below it.
 */
export const EMAIL_CODE_FAILURES_PER_EMAIL: LoginThrottleRule = { failuresMax: 100, windowSeconds: 15 * 60 };

export interface EmailCodesServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  readonly gate: SignInGate;
  readonly rateLimiter: RateLimiter;
  readonly throttle: LoginThrottle;
  readonly audit: AuditService;
}

/**
 * Passwordless sign-in with a 6-digit code sent by email (docs/adr/0016-mfa.md). Asking answers 202
 * whatever the address: the request is stored and the email queued alike for every address, and
 * the composer, when the email is about to go, decides whether there is anyone to send it to. The
 * code is a first factor: a user with an authenticator still needs it.
 */
export class EmailCodesService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #gate: SignInGate;
  readonly #rateLimiter: RateLimiter;
  readonly #throttle: LoginThrottle;
  readonly #audit: AuditService;
  readonly #linking: IdentityLinking;

  constructor(options: EmailCodesServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#gate = options.gate;
    this.#rateLimiter = options.rateLimiter;
    this.#throttle = options.throttle;
    this.#audit = options.audit;
    this.#linking = new IdentityLinking(options);
  }

  /**
   * `POST /v1/auth/email-code`: stores a new request for the address and queues its email, unless
   * the address has 3 live codes already or asked within the last minute. Earlier codes stay valid.
   */
  async request(
    projectId: string,
    input: { email: string; createUser: boolean },
    client: SessionClient,
    context: AuditContext,
  ): Promise<void> {
    const record = (userId: string | null, queued: boolean): AuditRecord => ({
      projectId,
      action: 'user.email_code_send',
      resource: { type: 'user', id: userId },
      changes: { email: input.email.trim().slice(0, 254), create_user: input.createUser, email_queued: queued },
    });
    await this.#audit.recordingRefusals(context, record(null, false), async () => {
      const email = normalizeEmail(input.email);
      const perIp = await this.#rateLimiter.consume(`email-code-ip:${projectId}:${limitAddress(client.ip)}`, EMAIL_CODE_SEND_PER_IP_RULE);
      if (!perIp.allowed) {
        throw new ApiError('rate_limited', `Too many codes asked; retry in ${perIp.retryAfterSeconds} s.`, {
          headers: { 'Retry-After': String(perIp.retryAfterSeconds) },
        });
      }
      const user = await this.#users.findRecordByEmail(projectId, email);
      // Serializable on PostgreSQL: two requests at once both counting the address's codes, then both
      // adding one, would pass the limits together; one of them is made to run again instead.
      await inTransaction(
        this.#db,
        async (trx) => {
          const queued = await this.#queueCodeInTransaction(trx, { projectId, email, createUser: input.createUser });
          await this.#audit.record(trx, context, { ...record(user?.id ?? null, queued), createdAt: isoTime(this.#clock.now()) });
        },
        { isolation: 'serializable' },
      );
    });
  }

  /** Stores the request and queues its email when the address's limits allow; answers whether it did. */
  async #queueCodeInTransaction(
    trx: Transaction,
    input: { projectId: string; email: NormalizedEmail; createUser: boolean },
  ): Promise<boolean> {
    const { projectId, email } = input;
    const now = this.#clock.now();
    const codes = await store.addressCodes(trx, {
      projectId,
      emailKey: email.emailKey,
      now: isoTime(now),
      attemptsMax: EMAIL_CODE_ATTEMPTS_MAX,
    });
    const resendFrom = isoTime(addMilliseconds(now, -EMAIL_CODE_RESEND_INTERVAL_MS));
    if (codes.live >= EMAIL_CODES_LIVE_MAX || (codes.latestCreatedAt !== undefined && codes.latestCreatedAt > resendFrom)) return false;
    const requestRef = randomBytes(16).toString('base64url');
    await store.insertEmailCodeRequest(trx, {
      project_id: projectId,
      request_ref: requestRef,
      email_key: email.emailKey,
      email: email.email,
      code_hash: null,
      create_user: input.createUser ? 1 : 0,
      attempts: 0,
      expires_at: isoTime(addMilliseconds(now, EMAIL_CODE_TTL_MS)),
      used_at: null,
      created_at: isoTime(now),
    });
    await queueEmail(trx, {
      projectId,
      template: EMAIL_CODE_TEMPLATE,
      recipient: email.email,
      data: { email_key: email.emailKey, request_ref: requestRef },
      now: isoTime(now),
    });
    return true;
  }

  /**
   * The email's composer calls this just before sending: the code, made now and stored hashed, or
   * undefined when nobody should get it (no user and no `create_user`, a banned user, a request
   * used, expired or ended by wrong tries meanwhile). The code's 10 minutes start now.
   */
  async issueCode(projectId: string, data: Readonly<Record<string, unknown>>): Promise<{ code: string; ttlMinutes: number } | undefined> {
    const requestRef = data['request_ref'];
    if (typeof requestRef !== 'string') return undefined;
    return inTransaction(this.#db, async (trx) => {
      const row = await store.findEmailCodeRequest(trx, projectId, requestRef);
      const now = this.#clock.now();
      if (row === undefined || !isLive(row, isoTime(now))) return undefined;
      const user = await this.#users.findRecordByEmail(projectId, normalizeEmail(row.email), trx);
      if (user === undefined ? row.create_user !== 1 : user.banned_at !== null) return undefined;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const stored = await store.setEmailCode(trx, {
        projectId,
        requestRef,
        codeHash: emailCodeHash(row, code),
        expiresAt: isoTime(addMilliseconds(now, EMAIL_CODE_TTL_MS)),
      });
      return stored ? { code, ttlMinutes: EMAIL_CODE_TTL_MS / 60_000 } : undefined;
    });
  }

  /**
   * `POST /v1/auth/email-code/verify`: the code for a session (or a second-factor challenge). The
   * code is compared with every live code of the address; each try counts against each of them (5),
   * and wrong ones against the address (429 past the limits). Signing in by code proves the
   * address: identity linking may verify or claim the account.
   */
  async verify(
    projectId: string,
    input: { email: string; code: string },
    client: SessionClient,
    context: AuditContext,
  ): Promise<SignInResult> {
    let userId: string | null = null;
    const refused = (): AuditRecord => ({ projectId, action: 'user.email_code_login', resource: { type: 'user', id: userId } });
    return this.#audit.recordingRefusals(context, refused, async () => {
      const email = normalizeEmail(input.email);
      if (!EMAIL_CODE_PATTERN.test(input.code)) throw emailCodeInvalid();
      const tag = `{${projectId}:${sha256Hex(email.emailKey)}}`;
      const limits = {
        narrow: { key: `${tag}:code:ip:${limitAddress(client.ip)}`, ...EMAIL_CODE_FAILURES_PER_ADDRESS },
        wide: { key: `${tag}:code:all`, ...EMAIL_CODE_FAILURES_PER_EMAIL },
      };
      const result = await throttledAttempt(this.#throttle, limits, async () => {
        const live = await store.countEmailCodeAttempt(this.#db.kysely, {
          projectId,
          emailKey: email.emailKey,
          now: isoTime(this.#clock.now()),
          attemptsMax: EMAIL_CODE_ATTEMPTS_MAX,
        });
        // Wrong, whether or not the address has a live code: a failure, counted as log in counts an unknown email's.
        const matched = live.find((row) => row.code_hash !== null && constantTimeEqual(row.code_hash, emailCodeHash(row, input.code)));
        if (matched === undefined) return undefined;
        return inTransaction(this.#db, async (trx) => {
          const outcome = await this.#signInInTransaction(trx, { projectId, email, row: matched, client, context });
          userId = outcome.userId;
          return outcome.result;
        });
      });
      if (result === undefined) throw emailCodeInvalid();
      return result;
    });
  }

  /** A right code: used (with the address's other codes), then the sign-in, as any first factor. */
  async #signInInTransaction(
    trx: Transaction,
    input: { projectId: string; email: NormalizedEmail; row: store.EmailCodeRow; client: SessionClient; context: AuditContext },
  ): Promise<{ userId: string; result: SignInResult }> {
    const { projectId, email, client, context } = input;
    const now = this.#clock.now();
    if (!(await store.useEmailCode(trx, { projectId, requestRef: input.row.request_ref, now: isoTime(now) }))) throw emailCodeInvalid();
    await store.useAllEmailCodes(trx, { projectId, emailKey: email.emailKey, now: isoTime(now) });
    const existing = await this.#users.findRecordByEmail(projectId, email, trx);
    if (existing === undefined && input.row.create_user !== 1) throw emailCodeInvalid();
    const { user, created, claimed } = await this.#linking.signInInTransaction(trx, {
      projectId,
      method: 'email_code',
      email,
      emailProven: true,
      name: '',
      passwordHash: null,
      now,
      context,
    });
    const outcome = await this.#gate.afterFirstFactorInTransaction(trx, { projectId, userId: user.id, client, now, amr: ['email_code'] });
    await this.#audit.record(trx, context, {
      projectId,
      action: 'user.email_code_login',
      resource: { type: 'user', id: user.id },
      changes: { user_created: created, email_claimed: claimed, ...signInChanges(outcome) },
      createdAt: isoTime(now),
    });
    return { userId: user.id, result: signInResult(toUser(user), outcome) };
  }
}

/** Unused, unexpired and below its tries: a code that can still sign in (or, before its email, be made). */
function isLive(row: store.EmailCodeRow, nowIso: string): boolean {
  return row.used_at === null && row.expires_at > nowIso && row.attempts < EMAIL_CODE_ATTEMPTS_MAX;
}

/** Salted with the row's request: a code is only good for the request it was sent for. */
function emailCodeHash(row: Pick<store.EmailCodeRow, 'project_id' | 'email_key' | 'request_ref'>, code: string): string {
  return sha256Hex(`${row.project_id}:${row.email_key}:${row.request_ref}:${code}`);
}

function emailCodeInvalid(): ApiError {
  return new ApiError('email_code_invalid', 'This code is wrong, expired or used; ask for a new one.', { param: 'code' });
}

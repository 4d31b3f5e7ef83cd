import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { limitAddress } from '../../lib/client-address.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { type LoginThrottle, type LoginThrottleRule, throttledAttempt } from '../../lib/login-throttle.js';
import {
  type AuthenticationMethod,
  parseAmr,
  type IssuedSessionTokens,
  type SessionClient,
  type SessionsService,
} from '../sessions/sessions.service.js';
import type { IssuedSession } from '../sessions/sessions.schemas.js';
import type { User } from '../users/users.schemas.js';
import { toUser, type UsersService } from '../users/users.service.js';
import * as store from './mfa.store.js';
import { activeMethodsInTransaction, type FactorProof, type MfaMethod, proveSecondFactorInTransaction } from './second-factor.js';

/** A sign-in waiting for its second factor lives 5 minutes and takes 5 codes (docs/api.md, "Second factors"). */
export const MFA_TOKEN_TTL_MS = 5 * 60 * 1000;
export const MFA_TOKEN_ATTEMPTS_MAX = 5;
export const MFA_TOKEN_PATTERN = /^svc_mfa_[A-Za-z0-9_-]{43}$/;
const MFA_TOKEN_BYTES = 32;

/**
 * Wrong second-factor codes per project, user and end-user address, whatever the token: 10 per 15
 * minutes (two tokens' worth), so that logging in again for fresh tokens does not give more guesses.
 */
export const MFA_FAILURES_PER_ADDRESS: LoginThrottleRule = { failuresMax: 10, windowSeconds: 15 * 60 };
/** Wrong second-factor codes per project and user from all addresses together: 20 per 15 minutes. */
export const MFA_FAILURES_PER_USER: LoginThrottleRule = { failuresMax: 20, windowSeconds: 15 * 60 };

/** What a first factor gets instead of a session when the user has a second one. */
export interface MfaChallenge {
  readonly mfa_required: true;
  readonly mfa_token: string;
  readonly methods: MfaMethod[];
}

export type FirstFactorOutcome =
  { readonly kind: 'session'; readonly issued: IssuedSessionTokens } | { readonly kind: 'mfa_required'; readonly challenge: MfaChallenge };

export interface UserAndSession {
  readonly user: User;
  readonly session: IssuedSession;
}

/** What a first factor answers: the session, or the challenge of a second factor. */
export type SignInResult = UserAndSession | MfaChallenge;

export function signInResult(user: User, outcome: FirstFactorOutcome): SignInResult {
  return outcome.kind === 'session' ? { user, session: outcome.issued.session } : outcome.challenge;
}

/** What a first factor's audit entry says it led to: the session's name, or a pending second factor. */
export function signInChanges(outcome: FirstFactorOutcome): { session_id: string } | { mfa_required: true } {
  return outcome.kind === 'session' ? { session_id: outcome.issued.name } : { mfa_required: true };
}

export interface SignInGateOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  readonly secrets: SecretBox;
  readonly throttle: LoginThrottle;
  readonly audit: AuditService;
}

/**
 * The one place a sign-in becomes a session (docs/adr/0016-mfa.md). Every first factor (password,
 * OAuth, SSO, emailed code) calls `afterFirstFactorInTransaction`: a user without an active second
 * factor gets the session at once; a user with one gets an `mfa_token` instead, which
 * `POST /v1/auth/mfa/verify` (`verify`) exchanges, with a code, for the session. A sign-in that is
 * itself strong (a passkey: something held and something known or biometric) says `strong: true`
 * and gets the session directly.
 */
export class SignInGate {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #sessions: SessionsService;
  readonly #secrets: SecretBox;
  readonly #throttle: LoginThrottle;
  readonly #audit: AuditService;

  constructor(options: SignInGateOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#sessions = options.sessions;
    this.#secrets = options.secrets;
    this.#throttle = options.throttle;
    this.#audit = options.audit;
  }

  /** In the first factor's transaction: the session, or the challenge (and no session) when a second factor is due. */
  async afterFirstFactorInTransaction(
    trx: Transaction,
    input: {
      projectId: string;
      userId: string;
      client: SessionClient;
      now: Date;
      strong?: boolean;
      /** The first factor's methods; a second factor adds its own (`verify`). */
      amr: readonly AuthenticationMethod[];
    },
  ): Promise<FirstFactorOutcome> {
    const { projectId, userId, client, now, amr } = input;
    const methods = input.strong === true ? [] : await activeMethodsInTransaction(trx, projectId, userId);
    if (methods.length === 0)
      return { kind: 'session', issued: await this.#sessions.createInTransaction(trx, { projectId, userId, client, now, amr }) };
    const token = `svc_mfa_${randomBytes(MFA_TOKEN_BYTES).toString('base64url')}`;
    await store.insertMfaToken(trx, {
      token_hash: sha256Hex(token),
      project_id: projectId,
      user_id: userId,
      attempts: 0,
      expires_at: isoTime(addMilliseconds(now, MFA_TOKEN_TTL_MS)),
      used_at: null,
      created_at: isoTime(now),
      amr: JSON.stringify(amr),
    });
    return { kind: 'mfa_required', challenge: { mfa_required: true, mfa_token: token, methods } };
  }

  /**
   * `POST /v1/auth/mfa/verify`: the token and a code for the session. Each code presented counts
   * against the token (5) and, across tokens, against the user and address (429 past the limits);
   * a right code uses up the token, and the code too.
   */
  async verify(
    projectId: string,
    input: { mfaToken: string; proof: FactorProof },
    client: SessionClient,
    context: AuditContext,
  ): Promise<UserAndSession> {
    let userId: string | null = null;
    const method = 'recoveryCode' in input.proof ? 'recovery_code' : 'totp';
    const refused = (): AuditRecord => ({
      projectId,
      action: 'user.mfa_verify',
      resource: { type: 'user', id: userId },
      changes: { method },
    });
    return this.#audit.recordingRefusals(context, refused, async () => {
      if (!MFA_TOKEN_PATTERN.test(input.mfaToken)) throw mfaTokenInvalid();
      const tokenHash = sha256Hex(input.mfaToken);
      const found = await store.findMfaToken(this.#db.kysely, projectId, tokenHash);
      // A dead token answers as such before the throttle is asked: its 5 codes are spent already.
      if (found === undefined || !isLive(found, isoTime(this.#clock.now()))) throw mfaTokenInvalid();
      userId = found.user_id;
      const limits = mfaThrottleLimits(projectId, found.user_id, client.ip);
      const signedIn = await throttledAttempt(this.#throttle, limits, async () => {
        const nowIso = isoTime(this.#clock.now());
        const token = await store.countMfaAttempt(this.#db.kysely, {
          projectId,
          tokenHash,
          now: nowIso,
          attemptsMax: MFA_TOKEN_ATTEMPTS_MAX,
        });
        if (token === undefined) throw mfaTokenInvalid();
        return inTransaction(this.#db, (trx) => this.#finish(trx, { projectId, token, proof: input.proof, client, context }));
      });
      if (signedIn === undefined)
        throw new ApiError('mfa_code_invalid', 'The code is wrong or was already used.', {
          param: method === 'totp' ? 'code' : 'recovery_code',
        });
      return signedIn;
    });
  }

  /** Undefined for a wrong code: the attempt was counted on the token and stays counted. */
  async #finish(
    trx: Transaction,
    input: { projectId: string; token: store.MfaTokenRow; proof: FactorProof; client: SessionClient; context: AuditContext },
  ): Promise<UserAndSession | undefined> {
    const { projectId, token } = input;
    const now = this.#clock.now();
    const user = await this.#users.findRecord(projectId, token.user_id, trx);
    if (user === undefined) throw mfaTokenInvalid();
    if (user.banned_at !== null) throw new ApiError('user_banned', 'This user is banned and cannot log in.');
    const method = await proveSecondFactorInTransaction(trx, this.#secrets, { projectId, userId: user.id, proof: input.proof, now });
    if (method === undefined) return undefined;
    if (!(await store.useMfaToken(trx, projectId, token.token_hash, isoTime(now)))) throw mfaTokenInvalid();
    // The first factor's methods, then the second's: a code from an authenticator app is `otp`
    // (RFC 8176); a recovery code has no name of its own there, and both make the sign-in `mfa`.
    const amr: AuthenticationMethod[] = [...parseAmr(token.amr), ...(method === 'totp' ? (['otp'] as const) : []), 'mfa'];
    const issued = await this.#sessions.createInTransaction(trx, { projectId, userId: user.id, client: input.client, now, amr });
    await this.#audit.record(trx, input.context, {
      projectId,
      action: 'user.mfa_verify',
      resource: { type: 'user', id: user.id },
      changes: {
        method,
        session_id: issued.name,
        ...(method === 'recovery_code' ? { recovery_codes_left: await store.countRecoveryCodesLeft(trx, projectId, user.id) } : {}),
      },
      createdAt: isoTime(now),
    });
    return { user: toUser(user), session: issued.session };
  }
}

/**
 * The throttle of second-factor codes, per project and user: per end-user address and across all.
 * Both keys share the `{project:user}` hash tag, so one Redis Cluster node holds them.
 */
export function mfaThrottleLimits(projectId: string, userId: string, ip: string | undefined) {
  const tag = `{${projectId}:${userId}}`;
  return {
    narrow: { key: `${tag}:mfa:ip:${limitAddress(ip)}`, ...MFA_FAILURES_PER_ADDRESS },
    wide: { key: `${tag}:mfa:all`, ...MFA_FAILURES_PER_USER },
  };
}

function isLive(token: store.MfaTokenRow, nowIso: string): boolean {
  return token.used_at === null && token.expires_at > nowIso && token.attempts < MFA_TOKEN_ATTEMPTS_MAX;
}

function mfaTokenInvalid(): ApiError {
  return new ApiError('mfa_token_invalid', 'This mfa_token is unknown, expired, used, or ended by too many wrong codes; log in again.', {
    param: 'mfa_token',
  });
}

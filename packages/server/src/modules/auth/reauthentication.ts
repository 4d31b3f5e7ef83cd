/**
 * `POST /v1/users/me/reauthenticate`: the session's user proves again who they are, with the
 * password or a second factor, so that the session may make the changes that need a recent
 * sign-in (docs/api.md, "Reauthentication"). `SessionsService.requireRecentAuthentication` is
 * the check those routes make; this is how a session passes it again without signing in anew.
 */
import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { type LoginThrottle, throttledAttempt } from '../../lib/login-throttle.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import type { FactorProof, MfaService } from '../mfa/mfa.service.js';
import type { SessionClient, SessionPrincipal, SessionsService } from '../sessions/sessions.service.js';
import type { UsersService } from '../users/users.service.js';
import { loginThrottleLimits } from './auth.service.js';
import { verifyPassword } from './passwords.js';

/** What the user proves themselves with: exactly one of the body's fields. */
export type ReauthenticationProof = { readonly password: string } | FactorProof;

export interface Reauthenticated {
  readonly object: 'reauthentication';
  readonly reauthenticated_at: string;
}

export interface ReauthenticationOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  readonly mfa: MfaService;
  readonly loginThrottle: LoginThrottle;
  readonly audit: AuditService;
}

export class Reauthentication {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #sessions: SessionsService;
  readonly #mfa: MfaService;
  readonly #throttle: LoginThrottle;
  readonly #audit: AuditService;

  constructor(options: ReauthenticationOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#sessions = options.sessions;
    this.#mfa = options.mfa;
    this.#throttle = options.loginThrottle;
    this.#audit = options.audit;
  }

  /**
   * Every attempt goes through log in's throttle, on the same counters as log in (per email and
   * address, and per email): a stolen session must not become a way to guess the password, or the
   * authenticator's codes, faster than log in allows. Second-factor codes also count against the
   * user's second-factor limits, as at `POST /v1/auth/mfa/verify`.
   */
  async reauthenticate(
    principal: SessionPrincipal,
    proof: ReauthenticationProof,
    client: SessionClient,
    context: AuditContext,
  ): Promise<Reauthenticated> {
    const method = 'password' in proof ? 'password' : 'code' in proof ? 'totp' : 'recovery_code';
    const record: AuditRecord = {
      projectId: principal.projectId,
      action: 'session.reauthenticate',
      resource: { type: 'session', id: principal.sessionName },
      changes: { user_id: principal.userId, method },
    };
    return this.#audit.recordingRefusals(context, record, async () => {
      const user = await this.#users.getRecord(principal.projectId, principal.userId);
      const limits = loginThrottleLimits(principal.projectId, user.email_key, client.ip);
      const finish = async (trx: Transaction, now: Date): Promise<Reauthenticated> => {
        const reauthenticatedAt = await this.#sessions.markReauthenticatedInTransaction(trx, principal, now);
        await this.#audit.record(trx, context, { ...record, createdAt: reauthenticatedAt });
        return { object: 'reauthentication', reauthenticated_at: reauthenticatedAt };
      };
      const result = await throttledAttempt(this.#throttle, limits, async () => {
        if ('password' in proof) {
          const passwordHash = user.password_hash;
          if (passwordHash === null || !(await verifyPassword(passwordHash, proof.password))) return undefined;
          return inTransaction(this.#db, (trx) => finish(trx, this.#clock.now()));
        }
        return this.#mfa.proveFactor({ projectId: principal.projectId, userId: user.id, proof, client }, (trx, _method, now) =>
          finish(trx, now),
        );
      });
      if (result !== undefined) return result;
      if ('password' in proof) throw new ApiError('invalid_credentials', 'The password is incorrect.', { param: 'password' });
      throw new ApiError('mfa_code_invalid', 'The code is wrong or was already used.', {
        param: 'code' in proof ? 'code' : 'recovery_code',
      });
    });
  }
}

/** Exactly one of `password`, `code` and `recovery_code`. */
export function reauthenticationProof(body: { password?: string; code?: string; recovery_code?: string }): ReauthenticationProof {
  const given = (['password', 'code', 'recovery_code'] as const).filter((field) => body[field] !== undefined);
  if (given.length === 0) {
    throw new ApiError('parameter_missing', 'Send the password, a code of the authenticator, or a recovery code.', { param: 'password' });
  }
  if (given.length > 1) throw new ApiError('parameter_invalid', `Send one of ${given.join(', ')}, not several.`, { param: given[1] });
  if (body.password !== undefined) return { password: body.password };
  if (body.code !== undefined) return { code: body.code };
  return { recoveryCode: String(body.recovery_code) };
}

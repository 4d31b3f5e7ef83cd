import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { type LoginThrottle, throttledAttempt } from '../../lib/login-throttle.js';
import { recordEvent } from '../events/events.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { SessionClient } from '../sessions/sessions.service.js';
import { queueSecurityNotice, type UserClaimStep, type UsersService } from '../users/users.service.js';
import * as store from './mfa.store.js';
import {
  type FactorProof,
  type MfaMethod,
  newRecoveryCodes,
  proveSecondFactorInTransaction,
  recoveryCodeHash,
  totpSecretContext,
} from './second-factor.js';
import { mfaThrottleLimits } from './sign-in-gate.js';

// The sign-in gate every first factor (password, OAuth, SSO, email code, passkey) passes through,
// and what the module that wires authentication needs.
export { type MfaChallenge, SignInGate, signInChanges, type SignInResult, signInResult } from './sign-in-gate.js';
export { mfaCleanupJob } from './mfa.job.js';
export { emailCodeComposers } from './email-codes.emails.js';
export type { FactorProof, MfaMethod } from './second-factor.js';
import { matchingStep, newTotpSecret, otpauthUrl, TOTP_CODE_PATTERN } from './totp.js';

export interface TotpEnrolment {
  readonly secret: string;
  readonly otpauth_url: string;
  readonly status: 'pending';
}

export interface TotpActivation {
  readonly status: 'active';
  readonly recovery_codes: string[];
}

/** A user's second factors as the API and the dashboard show them; never a secret. */
export interface MfaStatus {
  readonly object: 'mfa';
  readonly user_id: string;
  readonly totp: { readonly status: 'none' | 'pending' | 'active'; readonly activated_at: string | null };
  readonly recovery_codes_left: number;
  readonly methods: MfaMethod[];
}

export interface MfaServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly projects: ProjectsService;
  readonly secrets: SecretBox;
  readonly throttle: LoginThrottle;
  readonly audit: AuditService;
}

/**
 * A user's authenticator app: enrolment, its confirmation (which makes the recovery codes),
 * removal by the user with a code, and reset by an administrator. The secret is sealed at rest;
 * recovery codes are stored as hashes and shown once (docs/adr/0016-mfa.md).
 */
export class MfaService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UsersService;
  readonly #projects: ProjectsService;
  readonly #secrets: SecretBox;
  readonly #throttle: LoginThrottle;
  readonly #audit: AuditService;

  constructor(options: MfaServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#projects = options.projects;
    this.#secrets = options.secrets;
    this.#throttle = options.throttle;
    this.#audit = options.audit;
  }

  async status(projectId: string, userId: string): Promise<MfaStatus> {
    await this.#users.getRecord(projectId, userId);
    const factor = await store.findTotp(this.#db.kysely, projectId, userId);
    const active = factor?.status === 'active';
    return {
      object: 'mfa',
      user_id: userId,
      totp: { status: factor?.status ?? 'none', activated_at: factor?.activated_at ?? null },
      recovery_codes_left: active ? await store.countRecoveryCodesLeft(this.#db.kysely, projectId, userId) : 0,
      methods: active ? ['totp', 'recovery_code'] : [],
    };
  }

  /** `POST /v1/users/me/mfa/totp`: a new secret, pending until a code confirms it; replaces an unconfirmed one. */
  async enrol(projectId: string, userId: string, context: AuditContext): Promise<TotpEnrolment> {
    const record = userRecord(projectId, userId, 'user.mfa_enroll');
    return this.#audit.recordingRefusals(context, record, async () => {
      // Read before the transaction: on SQLite a read outside it would wait for it to end.
      const project = await this.#projects.getProject(projectId);
      return inTransaction(this.#db, async (trx) => {
        const user = await this.#users.getRecord(projectId, userId, trx);
        const existing = await store.findTotp(trx, projectId, userId);
        if (existing?.status === 'active')
          throw new ApiError('mfa_already_enabled', 'An authenticator is already active; disable it first.');
        const secret = newTotpSecret();
        const nowIso = isoTime(this.#clock.now());
        await store.replacePendingTotp(trx, {
          project_id: projectId,
          user_id: userId,
          secret_sealed: this.#secrets.seal(secret, totpSecretContext(projectId, userId)),
          status: 'pending',
          last_used_step: null,
          created_at: nowIso,
          activated_at: null,
        });
        await this.#audit.record(trx, context, { ...record, changes: { method: 'totp' }, createdAt: nowIso });
        return { secret, otpauth_url: otpauthUrl({ secret, issuer: project.name, account: user.email }), status: 'pending' } as const;
      });
    });
  }

  /** `POST /v1/users/me/mfa/totp/verify`: a code of the pending secret turns it on and makes ten recovery codes. */
  async confirm(projectId: string, userId: string, code: string, client: SessionClient, context: AuditContext): Promise<TotpActivation> {
    const record = userRecord(projectId, userId, 'user.mfa_enable');
    return this.#audit.recordingRefusals(context, record, async () => {
      const activated = await throttledAttempt(this.#throttle, mfaThrottleLimits(projectId, userId, client.ip), () =>
        inTransaction(this.#db, async (trx) => {
          const factor = await store.findTotp(trx, projectId, userId);
          if (factor === undefined)
            throw new ApiError('mfa_not_enabled', 'No authenticator enrolment to confirm; start one with POST /v1/users/me/mfa/totp.');
          if (factor.status === 'active') throw new ApiError('mfa_already_enabled', 'The authenticator is already active.');
          const now = this.#clock.now();
          const secret = this.#secrets.open(factor.secret_sealed, totpSecretContext(projectId, userId));
          const step = matchingStep(secret, code, now);
          const nowIso = isoTime(now);
          if (step === undefined || !(await store.acceptStep(trx, { projectId, userId, step, status: 'pending', activatedAt: nowIso }))) {
            return undefined;
          }
          const codes = newRecoveryCodes();
          const codeHashes = codes.map((recoveryCode) => recoveryCodeHash(userId, recoveryCode) ?? '');
          await store.replaceRecoveryCodes(trx, { projectId, userId, codeHashes, now: nowIso });
          await this.#recordChange(trx, { projectId, userId, type: 'user.mfa.enabled', by: 'user', record, context, nowIso });
          const user = await this.#users.getRecord(projectId, userId, trx);
          await queueSecurityNotice(trx, { projectId, user, change: 'totp_enabled', changedAt: nowIso });
          return { status: 'active', recovery_codes: codes } as const;
        }),
      );
      if (activated === undefined) throw codeInvalid('code');
      return activated;
    });
  }

  /**
   * `DELETE /v1/users/me/mfa/totp`: the user turns the authenticator off, proving it with a current
   * code or one of the recovery codes (a lost phone should not need an administrator). Sign-ins
   * waiting for a second factor end with it.
   */
  async disable(projectId: string, userId: string, code: string, client: SessionClient, context: AuditContext): Promise<void> {
    const record = userRecord(projectId, userId, 'user.mfa_disable');
    const proof: FactorProof = TOTP_CODE_PATTERN.test(code) ? { code } : { recoveryCode: code };
    await this.#audit.recordingRefusals(context, record, async () => {
      const disabled = await throttledAttempt(this.#throttle, mfaThrottleLimits(projectId, userId, client.ip), () =>
        inTransaction(this.#db, async (trx) => {
          const factor = await store.findTotp(trx, projectId, userId);
          if (factor?.status !== 'active') throw new ApiError('mfa_not_enabled', 'The user has no active authenticator.');
          const now = this.#clock.now();
          const method = await proveSecondFactorInTransaction(trx, this.#secrets, { projectId, userId, proof, now });
          if (method === undefined) return undefined;
          await store.deleteFactors(trx, projectId, userId);
          await this.#recordChange(trx, {
            projectId,
            userId,
            type: 'user.mfa.disabled',
            by: 'user',
            record,
            context,
            nowIso: isoTime(now),
            method,
          });
          return true;
        }),
      );
      if (disabled === undefined) throw codeInvalid('code');
    });
  }

  /**
   * Checks a second factor of the user's active authenticator outside a sign-in (reauthentication)
   * and, when it is right, runs `then` in the same transaction, which uses the code up. Wrong codes
   * count as at `/auth/mfa/verify` (per user and address, and per user). Answers undefined for a
   * wrong code; 409 `mfa_not_enabled` when the user has no active authenticator.
   */
  async proveFactor<T>(
    input: { projectId: string; userId: string; proof: FactorProof; client: SessionClient },
    then: (trx: Transaction, method: MfaMethod, now: Date) => Promise<T>,
  ): Promise<T | undefined> {
    const { projectId, userId, proof } = input;
    return throttledAttempt(this.#throttle, mfaThrottleLimits(projectId, userId, input.client.ip), () =>
      inTransaction(this.#db, async (trx) => {
        const factor = await store.findTotp(trx, projectId, userId);
        if (factor?.status !== 'active') throw new ApiError('mfa_not_enabled', 'The user has no active authenticator.');
        const now = this.#clock.now();
        const method = await proveSecondFactorInTransaction(trx, this.#secrets, { projectId, userId, proof, now });
        return method === undefined ? undefined : then(trx, method, now);
      }),
    );
  }

  /** `DELETE /v1/users/{id}/mfa`: an administrator removes every second factor of the user (a lost phone and lost codes). */
  async reset(projectId: string, userId: string, context: AuditContext): Promise<MfaStatus> {
    const record = userRecord(projectId, userId, 'user.mfa_reset');
    await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        await this.#users.getRecord(projectId, userId, trx);
        const wasActive = await store.deleteFactors(trx, projectId, userId);
        const nowIso = isoTime(this.#clock.now());
        if (wasActive)
          await this.#recordChange(trx, { projectId, userId, type: 'user.mfa.disabled', by: 'administrator', record, context, nowIso });
        else await this.#audit.record(trx, context, { ...record, changes: { was_active: false }, createdAt: nowIso });
      }),
    );
    return this.status(projectId, userId);
  }

  async #recordChange(
    trx: Transaction,
    input: {
      projectId: string;
      userId: string;
      type: 'user.mfa.enabled' | 'user.mfa.disabled';
      by: 'user' | 'administrator';
      record: AuditRecord;
      context: AuditContext;
      nowIso: string;
      method?: MfaMethod;
    },
  ): Promise<void> {
    await recordEvent(trx, {
      projectId: input.projectId,
      type: input.type,
      data: { user_id: input.userId, method: 'totp', by: input.by },
      createdAt: input.nowIso,
    });
    await this.#audit.record(trx, input.context, {
      ...input.record,
      changes: { method: 'totp', ...(input.method === undefined ? {} : { proved_with: input.method }) },
      createdAt: input.nowIso,
    });
  }
}

/**
 * Rule 5 of identity linking (a prover claims an account whose address was never proven): the
 * unproven holder's second factors go with its other credentials, in the claim's transaction.
 */
/**
 * The claim step of identity linking (docs/adr/0014-identity-linking.md, rule 5): a claimed
 * account's second factor goes with its password, registered with the users service by main.ts.
 */
export function removeSecondFactorsOfClaimedUser(): UserClaimStep {
  return async (trx, input) => ({ second_factor_removed: await removeSecondFactorsInTransaction(trx, input.projectId, input.userId) });
}

export async function removeSecondFactorsInTransaction(trx: Transaction, projectId: string, userId: string): Promise<boolean> {
  return store.deleteFactors(trx, projectId, userId);
}

function userRecord(projectId: string, userId: string, action: AuditRecord['action']): AuditRecord {
  return { projectId, action, resource: { type: 'user', id: userId } };
}

function codeInvalid(param: string): ApiError {
  return new ApiError('mfa_code_invalid', 'The code is wrong or was already used.', { param });
}

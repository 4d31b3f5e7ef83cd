import { type AuthenticationResponseJSON, generateAuthenticationOptions, verifyAuthenticationResponse } from '@simplewebauthn/server';
import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type RateLimiter, type RateLimitRule, takeOrRefuse } from '../../lib/rate-limit.js';
import { limitAddress } from '../../lib/client-address.js';
import { assert } from '../../lib/assert.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import { type AuditContext, type AuditRecord, type AuditService, isRefusal } from '../audit/audit.service.js';
import { LOGIN_FAILURES_PER_ADDRESS, LOGIN_FAILURES_PER_EMAIL, type UserAndSession } from '../auth/auth.service.js';
import { type LoginThrottle, type ThrottledAttemptLimits, throttledAttempt } from '../../lib/login-throttle.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { SignInGate } from '../mfa/mfa.service.js';
import type { IssuedSessionTokens, SessionClient } from '../sessions/sessions.service.js';
import { normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import { CHALLENGE_TTL_MS, challengeOfClientData, type PasskeyChallenges } from './passkeys.challenges.js';
import type { AuthenticationCredential } from './passkeys.schemas.js';
import { parseTransports } from './passkeys.service.js';
import * as store from './passkeys.store.js';

/** Sign-in options per project and end-user address: 20 at once, then one a second (each stores a challenge). */
export const PASSKEY_OPTIONS_RATE_RULE: RateLimitRule = { perSecond: 1, burst: 20 };

export interface PasskeySignInOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly projects: ProjectsService;
  readonly users: UsersService;
  /** Where every sign-in becomes a session; a passkey's is strong, so no second factor is asked. */
  readonly gate: SignInGate;
  readonly challenges: PasskeyChallenges;
  /** Log in's failure throttle (memory or Redis), with log in's rules. */
  readonly loginThrottle: LoginThrottle;
  readonly rateLimiter: RateLimiter;
  /** False turns the options limit off, with the per-IP request limit (`RATE_LIMIT_IP_PER_SECOND=0`). */
  readonly optionsLimited: boolean;
}

/**
 * Signing in with a passkey: request options, then the assertion, answered like log in
 * (docs/api.md, "Passkeys"; docs/adr/0017-passkeys.md).
 *
 * Failures are throttled as log in's are, per (credential, end-user address) and per credential,
 * with the same rules: slots are taken before the assertion is checked, a failure keeps its slot.
 */
export class PasskeySignIn {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #projects: ProjectsService;
  readonly #users: UsersService;
  readonly #gate: SignInGate;
  readonly #challenges: PasskeyChallenges;
  readonly #throttle: LoginThrottle;
  readonly #rateLimiter: RateLimiter;
  readonly #optionsLimited: boolean;

  constructor(options: PasskeySignInOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#projects = options.projects;
    this.#users = options.users;
    this.#gate = options.gate;
    this.#challenges = options.challenges;
    this.#throttle = options.loginThrottle;
    this.#rateLimiter = options.rateLimiter;
    this.#optionsLimited = options.optionsLimited;
  }

  /**
   * Request options and their `challenge_id`, the same for every email, known or not:
   * `allowCredentials` is always empty (passkeys are discoverable, so the browser finds the user's
   * own), so the answer never tells whether an address has an account or which credentials it has.
   * With an email, only that user's passkeys may answer the challenge (an address of no user gets
   * one that no passkey can satisfy); without one, any discoverable passkey of the project may.
   */
  async options(projectId: string, input: { email?: string | undefined }, client: SessionClient) {
    const relyingParty = await this.#projects.getRelyingParty(projectId);
    if (this.#optionsLimited) {
      await takeOrRefuse(this.#rateLimiter, `passkey-options:${projectId}:${limitAddress(client.ip)}`, PASSKEY_OPTIONS_RATE_RULE);
    }
    const user = input.email === undefined ? undefined : await this.#users.findRecordByEmail(projectId, normalizeEmail(input.email));
    const options = await generateAuthenticationOptions({
      rpID: relyingParty.rp_id,
      allowCredentials: [],
      timeout: CHALLENGE_TTL_MS,
      userVerification: 'required',
    });
    const challengeId = await this.#challenges.create({
      projectId,
      purpose: 'authentication',
      challenge: options.challenge,
      userId: user?.id ?? null,
      userBound: input.email !== undefined,
    });
    return { challenge_id: challengeId, ...options };
  }

  /** Verifies an assertion and issues a session: 200 shape A, as log in answers. */
  async signIn(
    projectId: string,
    input: { challenge_id: string; response: AuthenticationCredential },
    client: SessionClient,
    context: AuditContext,
  ): Promise<UserAndSession> {
    let userId: string | null = null;
    const refused = (): AuditRecord => ({
      projectId,
      action: 'user.passkey_login',
      resource: { type: 'user', id: userId },
      changes: { credential_id: input.response.id.slice(0, 200) },
    });
    return this.#audit.recordingRefusals(context, refused, () =>
      this.#throttled(throttleLimits(projectId, input.response.id, limitAddress(client.ip)), () =>
        this.#signIn(projectId, input, client, context, (id) => {
          userId = id;
        }),
      ),
    );
  }

  async #signIn(
    projectId: string,
    input: { challenge_id: string; response: AuthenticationCredential },
    client: SessionClient,
    context: AuditContext,
    found: (userId: string) => void,
  ): Promise<UserAndSession> {
    const relyingParty = await this.#projects.getRelyingParty(projectId);
    const challenge = challengeOfClientData(input.response.response.clientDataJSON);
    if (challenge === undefined) throw passkeyInvalid('The client data is not readable JSON with a challenge.');
    const row = await this.#challenges.use(projectId, 'authentication', { id: input.challenge_id, challenge });
    const passkey = await store.findPasskeyByCredential(this.#db.kysely, projectId, input.response.id);
    if (passkey === undefined) throw passkeyInvalid('No passkey of this project has this credential; it may have been removed.');
    found(passkey.user_id);
    if (row.user_bound === 1 && row.user_id !== passkey.user_id) throw passkeyInvalid('This passkey is not one of the requested user’s.');
    const userHandle = input.response.response.userHandle;
    if (userHandle !== undefined && !constantTimeEqual(userHandle, Buffer.from(passkey.user_id, 'utf8').toString('base64url'))) {
      throw passkeyInvalid('The authenticator names another user for this passkey.');
    }
    let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verified = await verifyAuthenticationResponse({
        response: { clientExtensionResults: {}, ...input.response } as AuthenticationResponseJSON,
        expectedChallenge: (answered) => constantTimeEqual(sha256Hex(answered), row.challenge_hash),
        expectedOrigin: [...relyingParty.origins],
        expectedRPID: relyingParty.rp_id,
        credential: {
          id: passkey.credential_id,
          publicKey: Buffer.from(passkey.public_key, 'base64url'),
          counter: passkey.sign_count,
          transports: parseTransports(passkey.transports),
        },
        requireUserVerification: true,
      });
    } catch (error) {
      throw passkeyInvalid(error instanceof Error ? describeFailure(error.message) : 'The assertion did not verify.');
    }
    if (!verified.verified) throw passkeyInvalid('The assertion did not verify.');
    const info = verified.authenticationInfo;
    return inTransaction(this.#db, async (trx) => {
      const user = await this.#users.findRecordLockedInTransaction(trx, projectId, passkey.user_id);
      if (user === undefined) throw passkeyInvalid('No passkey of this project has this credential; it may have been removed.');
      if (user.banned_at !== null) throw new ApiError('user_banned', 'This user is banned and cannot log in.');
      const now = this.#clock.now();
      // Removed between the lookup and here: the passkey no longer signs anyone in.
      const used = await store.recordPasskeyUse(trx, projectId, passkey.id, {
        signCount: info.newCounter,
        backedUp: info.credentialBackedUp,
        usedAt: isoTime(now),
      });
      if (!used) throw passkeyInvalid('No passkey of this project has this credential; it may have been removed.');
      const issued = await this.#issueSession(trx, { projectId, userId: user.id, client, now, multiFactor: true });
      await this.#audit.record(trx, context, {
        projectId,
        action: 'user.passkey_login',
        resource: { type: 'user', id: user.id },
        changes: { session_id: issued.name, passkey_id: passkey.id },
        createdAt: isoTime(now),
      });
      return { user: toUser(user), session: issued.session };
    });
  }

  /**
   * Issues the session of a verified passkey sign-in. A passkey with user verification is two
   * factors in one (the device and the PIN or biometric that unlocks it), so this session is issued
   * at once: log in's MFA gate (`mfa_required`) does not apply. `multiFactor: true` marks this as
   * the one place where a sign-in counts as having passed MFA (docs/adr/0017-passkeys.md).
   */
  async #issueSession(
    trx: Transaction,
    input: { projectId: string; userId: string; client: SessionClient; now: Date; multiFactor: true },
  ): Promise<IssuedSessionTokens> {
    const outcome = await this.#gate.afterFirstFactorInTransaction(trx, {
      ...input,
      strong: input.multiFactor,
      // Two factors in one: the device, and the PIN or biometric that unlocks it.
      amr: ['webauthn', 'mfa'],
    });
    assert(outcome.kind === 'session', 'a strong sign-in gets its session at once');
    return outcome.issued;
  }

  /**
   * Log in's throttle discipline (`throttledAttempt`): slots first, a failure keeps them, a success
   * clears the address's. A failure is a passkey refusal, thrown by `attempt`; anything else that
   * goes wrong gives the slots back.
   */
  async #throttled<T>(limits: ThrottledAttemptLimits, attempt: () => Promise<T>): Promise<T> {
    let refusal: unknown;
    const result = await throttledAttempt(this.#throttle, limits, async () => {
      try {
        return { value: await attempt() };
      } catch (error) {
        if (!(isRefusal(error) && (error.code === 'passkey_invalid' || error.code.startsWith('passkey_challenge')))) throw error;
        refusal = error;
        return undefined;
      }
    });
    if (result === undefined) throw refusal;
    return result.value;
  }
}

function throttleLimits(projectId: string, credentialId: string, ip: string | undefined): ThrottledAttemptLimits {
  const tag = `{${projectId}:passkey:${sha256Hex(credentialId)}}`;
  return {
    narrow: { key: `${tag}:ip:${ip ?? ''}`, ...LOGIN_FAILURES_PER_ADDRESS },
    wide: { key: `${tag}:all`, ...LOGIN_FAILURES_PER_EMAIL },
  };
}

/** The verifier's reason, with the one that matters most to an operator said plainly. */
function describeFailure(message: string): string {
  if (/counter/i.test(message))
    return `The signature counter went back (${message}): the passkey may have been cloned; the sign-in is refused.`;
  return message;
}

function passkeyInvalid(message: string): ApiError {
  return new ApiError('passkey_invalid', message);
}

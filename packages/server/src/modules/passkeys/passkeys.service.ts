import { generateRegistrationOptions, type RegistrationResponseJSON, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { queueSecurityNotice, type UsersService } from '../users/users.service.js';
import { CHALLENGE_TTL_MS, challengeOfClientData, type PasskeyChallenges } from './passkeys.challenges.js';
import { PASSKEY_NAME_LENGTH_MAX, type Passkey, type RegistrationCredential } from './passkeys.schemas.js';
import * as store from './passkeys.store.js';

/** Passkeys a user may have; a bound on `excludeCredentials` and on what one account can hold. */
export const PASSKEYS_PER_USER_MAX = 20;
const DEFAULT_PASSKEY_NAME = 'Passkey';

export interface PasskeysServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly projects: ProjectsService;
  readonly users: UsersService;
  readonly challenges: PasskeyChallenges;
}

/**
 * A user's passkeys: registration (the creation ceremony), listing and removal, by the user with
 * their session or by the project with its secret key. Sign-in is `PasskeySignIn`'s.
 *
 * Policies (docs/adr/0017-passkeys.md): user verification required, attestation `none`,
 * discoverable credentials required, one credential id once per project.
 */
export class PasskeysService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #projects: ProjectsService;
  readonly #users: UsersService;
  readonly #challenges: PasskeyChallenges;

  constructor(options: PasskeysServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#projects = options.projects;
    this.#users = options.users;
    this.#challenges = options.challenges;
  }

  /** Creation options for the session's user; the challenge in them is stored hashed, single use, 5 minutes. */
  async registrationOptions(projectId: string, userId: string) {
    const relyingParty = await this.#projects.getRelyingParty(projectId);
    const user = await this.#users.getRecord(projectId, userId);
    const existing = await store.listUserCredentials(this.#db.kysely, projectId, userId);
    const options = await generateRegistrationOptions({
      rpName: relyingParty.rp_name,
      rpID: relyingParty.rp_id,
      // The user handle is the opaque `usr_` id, never the email: authenticators may show or sync it.
      userID: new TextEncoder().encode(user.id),
      userName: user.email,
      userDisplayName: user.name === '' ? user.email : user.name,
      timeout: CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: parseTransports(row.transports) })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    await this.#challenges.create({ projectId, purpose: 'registration', challenge: options.challenge, userId, userBound: true });
    return options;
  }

  /** Verifies the authenticator's answer to `registrationOptions` and keeps the passkey. */
  async register(
    projectId: string,
    userId: string,
    input: { response: RegistrationCredential; name?: string | undefined },
    context: AuditContext,
  ): Promise<Passkey> {
    const refused: AuditRecord = {
      projectId,
      action: 'passkey.create',
      resource: { type: 'passkey', id: null },
      changes: { user_id: userId },
    };
    return this.#audit.recordingRefusals(context, refused, () => this.#register(projectId, userId, input, context));
  }

  async #register(
    projectId: string,
    userId: string,
    input: { response: RegistrationCredential; name?: string | undefined },
    context: AuditContext,
  ): Promise<Passkey> {
    const name = (input.name ?? DEFAULT_PASSKEY_NAME).trim();
    if (name === '' || name.length > PASSKEY_NAME_LENGTH_MAX)
      throw new ApiError('parameter_invalid', `name is 1 to ${PASSKEY_NAME_LENGTH_MAX} characters.`, { param: 'name' });
    const relyingParty = await this.#projects.getRelyingParty(projectId);
    const challenge = challengeOfClientData(input.response.response.clientDataJSON);
    if (challenge === undefined) throw verificationFailed('The client data is not readable JSON with a challenge.');
    const row = await this.#challenges.use(projectId, 'registration', { challenge });
    // Registrations find their challenge by hash, so the lookup is not scoped by user: insist here.
    if (row.user_id !== userId)
      throw new ApiError('passkey_challenge_invalid', 'This challenge was issued to another user.', { param: 'response' });
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({
        response: { clientExtensionResults: {}, ...input.response } as RegistrationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: [...relyingParty.origins],
        expectedRPID: relyingParty.rp_id,
        requireUserVerification: true,
      });
    } catch (error) {
      throw verificationFailed(error instanceof Error ? error.message : 'The registration response did not verify.');
    }
    if (!verified.verified) throw verificationFailed('The registration response did not verify.');
    const info = verified.registrationInfo;
    if (info.credential.id !== input.response.id)
      throw verificationFailed('The response id is not the credential id the authenticator attested.');
    const now = isoTime(this.#clock.now());
    const passkey: store.PasskeyRow = {
      id: newId('pk'),
      project_id: projectId,
      user_id: userId,
      credential_id: info.credential.id,
      public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
      sign_count: info.credential.counter,
      transports: JSON.stringify(info.credential.transports ?? []),
      device_type: info.credentialDeviceType,
      backed_up: info.credentialBackedUp ? 1 : 0,
      aaguid: info.aaguid,
      name,
      created_at: now,
      last_used_at: null,
    };
    try {
      await inTransaction(this.#db, async (trx) => {
        const user = await this.#users.getRecord(projectId, userId, trx);
        const count = (await store.listUserCredentials(trx, projectId, userId)).length;
        if (count >= PASSKEYS_PER_USER_MAX)
          throw new ApiError('parameter_invalid', `A user has at most ${PASSKEYS_PER_USER_MAX} passkeys; remove one first.`, {
            param: 'response',
          });
        await store.insertPasskey(trx, passkey);
        await recordPasskeyChange(trx, this.#audit, context, { passkey, kind: 'added', now });
        await queueSecurityNotice(trx, { projectId, user, change: 'passkey_added', changedAt: now });
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ApiError('passkey_already_registered', 'This authenticator credential is registered already.', { param: 'response' });
      throw error;
    }
    return toPasskey(passkey);
  }

  /** One page of a user's passkeys, newest first. */
  async list(
    projectId: string,
    userId: string,
    page: { limit?: number | undefined; starting_after?: string | undefined },
  ): Promise<{ object: 'list'; data: Passkey[]; has_more: boolean }> {
    await this.#users.getRecord(projectId, userId);
    const start = await startPage(page, {
      find: (id) => store.findUserPasskey(this.#db.kysely, projectId, userId, id),
      missing: (id) => `No passkey ${id}.`,
    });
    const rows = await store.listUserPasskeys(this.#db.kysely, projectId, userId, { limit: start.rowsToRead, after: start.after });
    return listOf(rows, start.limit, toPasskey);
  }

  /** Removes one of a user's passkeys; another user's or project's answers 404 as if it did not exist. */
  async remove(
    projectId: string,
    userId: string,
    passkeyId: string,
    context: AuditContext,
  ): Promise<{ id: string; object: 'passkey'; deleted: true }> {
    const refused: AuditRecord = {
      projectId,
      action: 'passkey.delete',
      resource: { type: 'passkey', id: passkeyId },
      changes: { user_id: userId },
    };
    return this.#audit.recordingRefusals(context, refused, () =>
      inTransaction(this.#db, async (trx) => {
        const passkey = await store.findUserPasskey(trx, projectId, userId, passkeyId);
        if (passkey === undefined || !(await store.deletePasskey(trx, projectId, passkeyId)))
          throw new ApiError('resource_missing', `No passkey ${passkeyId}.`, { param: 'id' });
        await recordPasskeyChange(trx, this.#audit, context, { passkey, kind: 'removed', now: isoTime(this.#clock.now()) });
        return { id: passkeyId, object: 'passkey' as const, deleted: true as const };
      }),
    );
  }
}

/** The event and audit entry of a passkey added or removed, in the change's transaction. */
export async function recordPasskeyChange(
  trx: Transaction,
  audit: AuditService,
  context: AuditContext,
  change: { passkey: store.PasskeyRow; kind: 'added' | 'removed'; now: string; reason?: string },
): Promise<void> {
  const { passkey, kind, now } = change;
  await recordEvent(trx, {
    projectId: passkey.project_id,
    type: kind === 'added' ? 'user.passkey.added' : 'user.passkey.removed',
    data: { user_id: passkey.user_id, passkey_id: passkey.id, name: passkey.name },
    createdAt: now,
  });
  await audit.record(trx, context, {
    projectId: passkey.project_id,
    action: kind === 'added' ? 'passkey.create' : 'passkey.delete',
    resource: { type: 'passkey', id: passkey.id },
    changes: { user_id: passkey.user_id, name: passkey.name, ...(change.reason === undefined ? {} : { reason: change.reason }) },
    createdAt: now,
  });
}

export function toPasskey(row: store.PasskeyRow): Passkey {
  return {
    id: row.id,
    object: 'passkey',
    user_id: row.user_id,
    name: row.name,
    device_type: row.device_type === 'multiDevice' ? 'multi_device' : 'single_device',
    backed_up: row.backed_up === 1,
    transports: parseTransports(row.transports),
    created_at: row.created_at,
    last_used_at: row.last_used_at,
  };
}

export function parseTransports(stored: string): string[] {
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.filter((value): value is string => typeof value === 'string') : [];
}

function verificationFailed(message: string): ApiError {
  return new ApiError('passkey_verification_failed', message, { param: 'response' });
}

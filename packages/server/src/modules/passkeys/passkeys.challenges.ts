import type { Db } from '../../db/database.js';
import type { PasskeyChallengePurpose } from '../../db/schema.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import * as store from './passkeys.store.js';

/** How long a ceremony may take, from its options to its response; also the options' `timeout`. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/**
 * The challenges of ceremonies in flight (docs/adr/0017-passkeys.md). A challenge is 32 random
 * bytes that the authenticator signs; only its SHA-256 is stored. It is used once: it is marked
 * used, atomically, BEFORE the response is verified, so a response that fails verification burns
 * its challenge too and a replay of any response finds it used.
 */
export class PasskeyChallenges {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(options: { db: Db; clock: Clock }) {
    this.#db = options.db;
    this.#clock = options.clock;
  }

  /** Stores a new challenge's hash and returns its id (the sign-in's `challenge_id`). */
  async create(input: {
    projectId: string;
    purpose: PasskeyChallengePurpose;
    challenge: string;
    userId: string | null;
    userBound: boolean;
  }): Promise<string> {
    const now = this.#clock.now();
    const id = newId('pkc');
    await store.insertChallenge(this.#db.kysely, {
      id,
      project_id: input.projectId,
      purpose: input.purpose,
      user_id: input.userId,
      user_bound: input.userBound ? 1 : 0,
      challenge_hash: sha256Hex(input.challenge),
      expires_at: isoTime(addMilliseconds(now, CHALLENGE_TTL_MS)),
      used_at: null,
      created_at: isoTime(now),
    });
    return id;
  }

  /**
   * Takes the challenge a response answers, once. A registration finds it by the challenge the
   * client data carries (`by.challenge`); a sign-in by its id, and then the client data's challenge
   * must hash to it (checked again by the verifier through `matches`).
   */
  async use(
    projectId: string,
    purpose: PasskeyChallengePurpose,
    by: { challenge: string } | { id: string; challenge: string },
  ): Promise<store.ChallengeRow> {
    const hash = sha256Hex(by.challenge);
    const param = 'id' in by ? 'challenge_id' : 'response';
    const row = await store.findChallenge(this.#db.kysely, projectId, purpose, 'id' in by ? { id: by.id } : { hash });
    if (row === undefined || !constantTimeEqual(row.challenge_hash, hash)) {
      throw new ApiError('passkey_challenge_invalid', 'This passkey challenge is unknown, or the response answers another one.', {
        param,
      });
    }
    const now = this.#clock.now();
    if (row.expires_at <= isoTime(now)) {
      throw new ApiError('passkey_challenge_expired', 'This passkey challenge has expired; ask for new options and try again.', {
        param,
      });
    }
    if (!(await store.useChallenge(this.#db.kysely, row.id, isoTime(now)))) {
      throw new ApiError('passkey_challenge_invalid', 'This passkey challenge was used already; ask for new options.', { param });
    }
    return row;
  }

  /** Deletes challenges that expired before `before`, a batch at a time. */
  async deleteExpired(before: Date, batch: number): Promise<void> {
    while ((await store.deleteExpiredChallenges(this.#db.kysely, isoTime(before), batch)) === batch);
  }
}

/** The challenge in a response's client data, without verifying anything; undefined when it is unreadable. */
export function challengeOfClientData(clientDataJSON: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const challenge = (parsed as { challenge?: unknown }).challenge;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 200 ? challenge : undefined;
  } catch {
    return undefined;
  }
}

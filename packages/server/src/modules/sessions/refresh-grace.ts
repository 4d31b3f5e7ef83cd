import type { Db } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { assert } from '../../lib/assert.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { SessionJwts } from './session-jwts.js';
import { sessionJwtOf } from './session-writes.js';
import type { IssuedSessionTokens } from './sessions.service.js';
import { clearSealedSuccessorsUsedBefore, findSession, type SessionRow } from './sessions.store.js';

/**
 * The refresh grace window's one secret at rest (docs/adr/0009-sessions-and-refresh-chains.md): a
 * used refresh row keeps its successor's session token and refresh token for the window, so that a
 * retry of the same refresh gets the same session again. They are sealed with the service's
 * SecretBox, never stored in clear; the associated data binds the sealed value to the row (its
 * project, its name and its refresh token's hash), so a copy pasted into another row does not open.
 */
export interface SuccessorSecrets {
  /** `svc_ses_<ref>.<secret>`. */
  readonly token: string;
  readonly refreshToken: string;
}

type RefreshRow = Pick<SessionRow, 'project_id' | 'id' | 'refresh_token_hash'>;

function associatedData(row: RefreshRow): string {
  return `sessions.successor_sealed:${row.project_id}:${row.id}:${row.refresh_token_hash}`;
}

export function sealSuccessor(box: SecretBox, row: RefreshRow, secrets: SuccessorSecrets): string {
  return box.seal(JSON.stringify({ token: secrets.token, refresh_token: secrets.refreshToken }), associatedData(row));
}

/**
 * The sealed successor of a used refresh row, or undefined when it holds none, or one this box
 * cannot open (the secrets key changed): then the retry is treated as reuse, the safe side.
 */
export function openSuccessor(box: SecretBox, row: RefreshRow & Pick<SessionRow, 'successor_sealed'>): SuccessorSecrets | undefined {
  if (row.successor_sealed === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(box.open(row.successor_sealed, associatedData(row)));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { token, refresh_token: refreshToken } = parsed as Record<string, unknown>;
  return typeof token === 'string' && typeof refreshToken === 'string' ? { token, refreshToken } : undefined;
}

/**
 * The session a used refresh token was exchanged for, with the same two tokens, when the token was
 * used less than the grace window ago and that session is still live, unexpired and unrefreshed;
 * undefined otherwise (then presenting the token is reuse).
 */
export async function successorWithinGrace(
  trx: Transaction,
  grace: { readonly secrets: SecretBox; readonly graceMs: number; readonly jwts: SessionJwts },
  row: SessionRow,
  now: Date,
): Promise<IssuedSessionTokens | undefined> {
  if (grace.graceMs === 0 || row.refreshed_at === null || row.replaced_by === null) return undefined;
  if (now.getTime() - Date.parse(row.refreshed_at) >= grace.graceMs) return undefined;
  const successor = await findSession(trx, row.project_id, row.replaced_by);
  if (successor === undefined || successor.revoked_at !== null || successor.refreshed_at !== null) return undefined;
  if (successor.expires_at <= isoTime(now)) return undefined;
  const secrets = openSuccessor(grace.secrets, row);
  if (secrets === undefined) return undefined;
  assert(
    constantTimeEqual(sha256Hex(secrets.token), successor.token_hash) &&
      constantTimeEqual(sha256Hex(secrets.refreshToken), successor.refresh_token_hash),
    `the sealed successor of ${row.id} is the session it names`,
  );
  // The same session again, with a JWT signed now (a JWT is a statement of the moment, not a secret to replay).
  const minted = await sessionJwtOf(trx, grace.jwts, successor, now);
  if (minted === undefined) return undefined;
  return {
    userId: successor.user_id,
    name: successor.id,
    session: {
      id: secrets.token,
      expires_at: successor.expires_at,
      refresh_token: secrets.refreshToken,
      refresh_expires_at: successor.refresh_expires_at,
      jwt: minted.jwt,
    },
  };
}

/** How often the job clears the sealed successors whose window has passed. */
const SEALED_SUCCESSORS_CLEANUP_INTERVAL_MS = 10_000;

/**
 * Clears every sealed successor whose grace window has passed, so none outlives its window by more
 * than the job's interval. Each refresh that finds one past its window, or that uses a later
 * token of the chain, clears it too; the job catches the rest (windows nobody came back to).
 */
export function sealedSuccessorsCleanupJob(options: { db: Db; clock: Clock; graceSeconds: number }): PeriodicJob {
  return {
    name: 'session-successors-cleanup',
    intervalMs: SEALED_SUCCESSORS_CLEANUP_INTERVAL_MS,
    async run() {
      const windowStart = isoTime(addMilliseconds(options.clock.now(), -options.graceSeconds * 1000));
      await clearSealedSuccessorsUsedBefore(options.db.kysely, windowStart);
    },
  };
}

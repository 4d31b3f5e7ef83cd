import type { Db } from '../../db/database.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { listOf, startPage } from '../../db/pagination.js';
import { ApiError } from '../../lib/errors.js';
import { SYSTEM_AUDIT_CONTEXT } from '../audit/audit.service.js';
import { type LedgerService, toGrant, toHold, walletMissing } from '../ledger/ledger.service.js';
import type { GrantList, Hold, HoldList, ListGrantsQuery, ListHoldsQuery } from '../ledger/holds.schemas.js';
import * as holds from './holds.store.js';
import * as wallets from './wallets.store.js';

/** The expiry job's period: a hold or grant is settled within about this long after it expires (the contract allows 5 s). */
export const EXPIRY_INTERVAL_MS = 1000;
/** Wallets settled per run at the most, so one run never holds the write path long; the next run takes the rest. */
const WALLETS_PER_RUN_MAX = 500;

/** Reads of holds and grants (docs/api.md section 4, "Holds and grants"); their writes go through `LedgerService`. */
export class HoldsService {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(options: { db: Db; clock: Clock }) {
    this.#db = options.db;
    this.#clock = options.clock;
  }

  async getHold(projectId: string, holdId: string): Promise<Hold> {
    const row = await holds.findHold(this.#db.kysely, projectId, holdId);
    if (row === undefined) throw new ApiError('resource_missing', `No hold ${holdId}.`);
    return toHold(row, this.#now());
  }

  async listHolds(projectId: string, walletId: string, query: ListHoldsQuery): Promise<HoldList> {
    await this.#wallet(projectId, walletId);
    const page = await startPage(query, {
      find: (id) => holds.findHold(this.#db.kysely, projectId, id),
      missing: (id) => `No hold ${id} to start after.`,
    });
    const now = this.#now();
    const rows = await holds.listHolds(this.#db.kysely, projectId, walletId, {
      after: page.after,
      limit: page.rowsToRead,
      status: query.status,
      now,
    });
    return listOf(rows, page.limit, (row) => toHold(row, now));
  }

  async listGrants(projectId: string, walletId: string, query: ListGrantsQuery): Promise<GrantList> {
    await this.#wallet(projectId, walletId);
    const page = await startPage(query, {
      find: (id) => holds.findGrant(this.#db.kysely, projectId, id),
      missing: (id) => `No grant ${id} to start after.`,
    });
    const now = this.#now();
    const rows = await holds.listGrants(this.#db.kysely, projectId, walletId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, (row) => toGrant(row, now));
  }

  async #wallet(projectId: string, walletId: string): Promise<void> {
    if ((await wallets.findWallet(this.#db.kysely, projectId, walletId)) === undefined) throw walletMissing(walletId);
  }

  #now(): string {
    return isoTime(this.#clock.now());
  }
}

/**
 * Settles expired holds and grants through the ledger's write path, a batch per project: holds past
 * `expires_at` release their credits (`wallet.hold.expired`), expired grants' credits leave their
 * wallets (`expiry` transactions, `wallet.credit.expired`). Returns how many wallets it settled.
 */
export async function settleExpired(deps: { db: Db; clock: Clock; ledger: LedgerService }): Promise<number> {
  const due = await holds.walletsToSettle(deps.db.kysely, isoTime(deps.clock.now()), WALLETS_PER_RUN_MAX);
  const byProject = new Map<string, string[]>();
  for (const row of due) byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row.wallet_id]);
  for (const [projectId, walletIds] of byProject) await deps.ledger.settle(projectId, walletIds, SYSTEM_AUDIT_CONTEXT);
  return due.length;
}

export function ledgerExpiryJob(deps: { db: Db; clock: Clock; ledger: LedgerService }): PeriodicJob {
  return {
    name: 'ledger-expiry',
    intervalMs: EXPIRY_INTERVAL_MS,
    async run() {
      await settleExpired(deps);
    },
  };
}

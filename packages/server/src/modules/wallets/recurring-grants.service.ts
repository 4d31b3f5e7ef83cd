import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import type { RecurringGrantsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { assert } from '../../lib/assert.js';
import { type Clock, isoTime, parseTimeParam } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AuditContext, type AuditService, SYSTEM_AUDIT_CONTEXT } from '../audit/audit.service.js';
import {
  GRANT_PRIORITY_DEFAULT,
  type LedgerService,
  type MovementRequest,
  refuseUnusable,
  walletMissing,
} from '../ledger/ledger.service.js';
import { CATEGORY_DEFAULT } from '../ledger/ledger.schemas.js';
import { parseMetadata } from '../../lib/metadata.js';
import { duePeriods, periodStartMs, type Schedule } from './recurring-grants.periods.js';
import type { CreateRecurringGrantBody, ListRecurringGrantsQuery, RecurringGrant, RecurringGrantList } from './recurring-grants.schemas.js';
import * as store from './recurring-grants.store.js';
import * as wallets from './wallets.store.js';

/** The job's period: a period is credited within about this long after it begins (the contract allows 5 s). */
export const RECURRING_GRANTS_INTERVAL_MS = 1000;
/** Recurring grants looked at per run at the most; the next run takes the rest. */
const GRANTS_PER_RUN_MAX = 200;
/** Credits per run at the most, so one run is one flush of the write path at the most (modules/ledger/ledger.write.ts). */
const CREDITS_PER_RUN_MAX = 1000;
/** Credits per recurring grant per run at the most, so one grant long overdue does not crowd out the others. */
const CREDITS_PER_GRANT_MAX = 100;
/** Periods looked at per recurring grant per run at the most (skipped ones included): a bound on a run's work. */
const PERIODS_PER_GRANT_MAX = 10_000;

/**
 * Recurring grants (docs/api.md section 4, "Recurring grants"; docs/adr/0022-recurring-grants.md):
 * the schedules, and the job that credits their periods through the ledger's one write path.
 */
export class RecurringGrantsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;

  constructor(options: { db: Db; clock: Clock; audit: AuditService }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
  }

  /**
   * A new schedule for an active wallet; its first period starts at `starts_at` (default now). A
   * frozen or closed wallet is refused as a credit to it would be.
   */
  async create(projectId: string, walletId: string, input: CreateRecurringGrantBody, context: AuditContext): Promise<RecurringGrant> {
    const record = {
      projectId,
      action: 'recurring_grant.create',
      resource: { type: 'recurring_grant', id: null },
      changes: { wallet_id: walletId, amount: input.amount, interval: input.interval },
    } as const;
    return this.#audit.recordingRefusals(context, record, async () => {
      const now = isoTime(this.#clock.now());
      const startsAt = input.starts_at === undefined ? now : isoTime(new Date(parseTimeParam(input.starts_at, 'starts_at')));
      const row: RecurringGrantsTable = {
        id: newId('rgr'),
        project_id: projectId,
        wallet_id: walletId,
        amount: input.amount,
        interval: input.interval,
        interval_count: input.interval_count ?? 1,
        starts_at: startsAt,
        expires: input.expires ?? 'period_end',
        category: input.category ?? CATEGORY_DEFAULT,
        priority: input.priority ?? GRANT_PRIORITY_DEFAULT,
        description: input.description ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        status: 'active',
        next_period: 0,
        next_grant_at: startsAt,
        created_at: now,
        cancelled_at: null,
      };
      await inTransaction(this.#db, async (trx) => {
        refuseUnusable(await wallets.findWallet(trx, projectId, walletId), walletId);
        await store.insertRecurringGrant(trx, row);
        const changes = { ...record.changes, interval_count: row.interval_count, starts_at: startsAt, expires: row.expires };
        await this.#audit.record(trx, context, { ...record, resource: { type: 'recurring_grant', id: row.id }, changes, createdAt: now });
      });
      return toRecurringGrant(row);
    });
  }

  async get(projectId: string, id: string): Promise<RecurringGrant> {
    return toRecurringGrant(await this.#find(projectId, id));
  }

  async list(projectId: string, walletId: string, query: ListRecurringGrantsQuery): Promise<RecurringGrantList> {
    const db = this.#db.kysely;
    if ((await wallets.findWallet(db, projectId, walletId)) === undefined) throw walletMissing(walletId);
    const page = await startPage(query, {
      find: async (id) => {
        const row = await store.findRecurringGrant(db, projectId, id);
        return row?.wallet_id === walletId ? row : undefined;
      },
      missing: (id) => `Wallet ${walletId} has no recurring grant ${id} to start after.`,
    });
    const rows = await store.listRecurringGrants(db, projectId, walletId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toRecurringGrant);
  }

  /** Cancels: no further credits; those made stay. Cancelling a cancelled grant changes nothing. */
  async cancel(projectId: string, id: string, context: AuditContext): Promise<RecurringGrant> {
    const record = { projectId, action: 'recurring_grant.cancel', resource: { type: 'recurring_grant', id } } as const;
    return this.#audit.recordingRefusals(context, record, async () => {
      const now = isoTime(this.#clock.now());
      await inTransaction(this.#db, async (trx) => {
        const current = await store.findRecurringGrant(trx, projectId, id);
        if (current === undefined) throw recurringGrantMissing(id);
        if (!(await store.cancelRecurringGrant(trx, projectId, id, now))) return;
        const changes = { wallet_id: current.wallet_id, status_before: current.status, status_after: 'cancelled' };
        await this.#audit.record(trx, context, { ...record, changes, createdAt: now });
      });
      return this.get(projectId, id);
    });
  }

  async #find(projectId: string, id: string): Promise<RecurringGrantsTable> {
    const row = await store.findRecurringGrant(this.#db.kysely, projectId, id);
    if (row === undefined) throw recurringGrantMissing(id);
    return row;
  }
}

function recurringGrantMissing(id: string): ApiError {
  return new ApiError('resource_missing', `No recurring grant ${id}.`);
}

export function toRecurringGrant(row: RecurringGrantsTable): RecurringGrant {
  return {
    id: row.id,
    object: 'recurring_grant',
    wallet_id: row.wallet_id,
    amount: row.amount,
    interval: row.interval,
    interval_count: row.interval_count,
    starts_at: row.starts_at,
    expires: row.expires,
    category: row.category,
    priority: row.priority,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    status: row.status,
    next_grant_at: row.next_grant_at,
    created_at: row.created_at,
    cancelled_at: row.cancelled_at,
  };
}

function scheduleOf(row: RecurringGrantsTable): Schedule & { expires: RecurringGrantsTable['expires'] } {
  return { startsAtMs: Date.parse(row.starts_at), interval: row.interval, intervalCount: row.interval_count, expires: row.expires };
}

/**
 * The idempotency key of period `index`'s credit, in the wallet's key namespace: whoever applies it
 * first makes the credit, every later try (another worker, a retry after a crash) replays it.
 */
export function periodKey(recurringGrantId: string, index: number): string {
  return `${recurringGrantId}:${index}`;
}

/**
 * Credits every begun period of the due recurring grants, through the ledger's write path (one
 * batch per project, not atomic), each under its period's key, then moves each grant on. Safe with
 * any number of workers and crashes: a period's credit is made once whoever applies it, and a grant
 * only moves forward. A refused credit (wallet frozen or closed) is the period's outcome: it is
 * stored with the key and not tried again. With `expires: period_end`, periods already over are
 * skipped. Returns how many credits it applied or replayed.
 */
export async function grantDuePeriods(deps: { db: Db; clock: Clock; ledger: LedgerService }): Promise<number> {
  const nowMs = deps.clock.now().getTime();
  const due = await store.dueRecurringGrants(deps.db.kysely, isoTime(new Date(nowMs)), GRANTS_PER_RUN_MAX);
  const byProject = new Map<string, { movements: MovementRequest[]; advances: { row: RecurringGrantsTable; next: number }[] }>();
  let credits = 0;
  for (const row of due) {
    if (credits >= CREDITS_PER_RUN_MAX) break;
    const schedule = scheduleOf(row);
    const periodsMax = Math.min(CREDITS_PER_GRANT_MAX, CREDITS_PER_RUN_MAX - credits);
    const { periods, next } = duePeriods(schedule, { from: row.next_period, nowMs, periodsMax, stepsMax: PERIODS_PER_GRANT_MAX });
    const batch = byProject.get(row.project_id) ?? { movements: [], advances: [] };
    byProject.set(row.project_id, batch);
    for (const period of periods) {
      batch.movements.push({
        type: 'credit',
        walletId: row.wallet_id,
        amount: row.amount,
        description: row.description,
        metadata: parseMetadata(row.metadata),
        idempotencyKey: periodKey(row.id, period.index),
        priority: row.priority,
        expiresAt: row.expires === 'period_end' ? isoTime(new Date(period.endMs)) : null,
        category: row.category,
        recurringGrantId: row.id,
      });
    }
    credits += periods.length;
    batch.advances.push({ row, next });
  }
  for (const [projectId, batch] of byProject) {
    if (batch.movements.length > 0) {
      const { outcomes } = await deps.ledger.batch(projectId, batch.movements, false, SYSTEM_AUDIT_CONTEXT);
      assert(outcomes.length === batch.movements.length, 'one outcome per credit');
    }
    // Only after the credits committed: a crash before this point leaves the grant where it was,
    // and the next run replays the same keys.
    for (const { row, next } of batch.advances) {
      if (next === row.next_period) continue;
      const grantAt = isoTime(new Date(periodStartMs(scheduleOf(row), next)));
      await store.advanceRecurringGrant(deps.db.kysely, row, { period: next, grantAt });
    }
  }
  return credits;
}

export function recurringGrantsJob(deps: { db: Db; clock: Clock; ledger: LedgerService }): PeriodicJob {
  return {
    name: 'recurring-grants',
    intervalMs: RECURRING_GRANTS_INTERVAL_MS,
    async run() {
      await grantDuePeriods(deps);
    },
  };
}

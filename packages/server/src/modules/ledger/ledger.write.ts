import type { Db } from '../../db/database.js';
import type { IdempotencyKeysTable } from '../../db/schema.js';
import { inTransaction, isUniqueViolation, type Transaction as DbTransaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { isApiError } from '../../lib/errors.js';
import { deleteStaleKey, findKeys, insertCompletedKeys, type RequestAnswer } from '../../lib/idempotency.store.js';
import { newId } from '../../lib/ids.js';
import type { AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvents } from '../events/events.service.js';
import { GroupCommit } from './group-commit.js';
import type { BatchOutcome, LedgerBatch, MovementRequest } from './ledger.movements.js';
import { LedgerPlan, movementKey } from './ledger.plan.js';
import { movementKeyRows } from './ledger.plan-rows.js';
import { type LedgerKey, type LedgerStatements, ledgerStatements, type WalletRef } from './ledger.statements.js';
import {
  findKeyedHolds,
  type GrantNeed,
  type HoldRef,
  holdWallets,
  loadGrants,
  loadHolds,
  insertGrants,
  writeHolds,
} from './ledger.statements-holds.js';
import { parseSources } from './ledger.plan-holds.js';
import { findReversible, reversedAmounts, type TransactionRef } from './ledger.statements-reversals.js';

/** Movements per flush at the most (a batch of 1,000 always goes whole), so a flush never holds its locks for long. */
const MOVEMENTS_PER_FLUSH_MAX = 1000;
/**
 * Flushes at once on PostgreSQL. They lock their wallets in id order, so they wait for each other
 * rather than deadlock; while one commits the next one's statements run.
 */
const POSTGRES_FLUSHES_MAX = 2;
/**
 * Tries of a flush. A try fails on a key's unique index only when another process committed the
 * same key between this flush's look-up and its insert; the next try finds that transaction.
 */
const FLUSH_ATTEMPTS_MAX = 4;

export interface LedgerWriterOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
}

/**
 * The ledger's one write path (docs/adr/0005-ledger-write-path.md). Every credit, debit and
 * transfer, single or batched, is a `LedgerBatch` given to `apply`; the batches that arrive together
 * share one database transaction (group commit), which:
 *
 * 1. locks every wallet they name, or whose holds they name (PostgreSQL: `FOR UPDATE`, in id order),
 * 2. looks up every idempotency key they carry (transactions and holds made under it, refusals
 *    stored with it), the holds they name and the grants they may draw on, reserve or expire,
 * 3. settles what time expired on those wallets (holds and grants, docs/adr/0018-holds-and-grants.md),
 *    then applies the movements in memory, in order, against the locked balances (`LedgerPlan`):
 *    the rules decide each outcome before anything is written,
 * 4. writes the balances, the transactions, their entries, the grants and holds, the keyed refusals and
 *    the outbox events (through the events module).
 *
 * Everything commits together or not at all. The audit log writes nothing here: it reads the
 * movements from the ledger, and the refusals are recorded after the answer, off this transaction
 * (docs/adr/0019-audit-reads-the-ledger.md).
 */
export class LedgerWriter {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #statements: LedgerStatements;
  readonly #groupCommit: GroupCommit<LedgerBatch, BatchOutcome>;

  constructor(options: LedgerWriterOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#statements = ledgerStatements(options.db.dialect);
    this.#groupCommit = new GroupCommit({
      flush: (batches) => this.#flush(batches),
      weight: (batch) => batch.movements.length,
      weightMax: MOVEMENTS_PER_FLUSH_MAX,
      concurrency: options.db.dialect === 'postgres' ? POSTGRES_FLUSHES_MAX : 1,
    });
  }

  /** Applies one request's movements; one outcome each, in order. */
  async apply(batch: LedgerBatch): Promise<BatchOutcome> {
    const outcome = await this.#groupCommit.run(batch);
    if (outcome.outcomes.some((one) => !one.ok)) this.#recordRefusals(batch, outcome);
    return outcome;
  }

  /**
   * The batch's refusals, for the audit log after the answer (`recordLater`): each refused
   * movement once, or an atomic batch's one refusal; not the replays of a key's stored refusal,
   * nor a key reused for another movement (it changes nothing, like the other idempotency
   * conflicts), which were never recorded.
   */
  #recordRefusals(batch: LedgerBatch, { outcomes, refusedAt }: BatchOutcome): void {
    const createdAt = isoTime(this.#clock.now());
    const records: AuditRecord[] = [];
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.ok || outcome.replayed) continue;
      if (batch.atomic ? index !== refusedAt : outcome.error.code === 'idempotency_key_reused') continue;
      const movement = batch.movements[index];
      // Money movements only: holds are the holds' own record (docs/adr/0018-holds-and-grants.md).
      if (movement?.type === 'credit' || movement?.type === 'debit' || movement?.type === 'transfer' || movement?.type === 'reverse') {
        records.push(refusalRecord(batch.projectId, movement, outcome.error.code, createdAt));
      }
    }
    this.#audit.recordLater(batch.context, records);
  }

  async #flush(batches: readonly LedgerBatch[]): Promise<BatchOutcome[]> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await inTransaction(this.#db, (trx) => this.#applyAll(trx, batches));
      } catch (error) {
        if (attempt < FLUSH_ATTEMPTS_MAX && isUniqueViolation(error)) continue;
        throw error;
      }
    }
  }

  async #applyAll(trx: DbTransaction, batches: readonly LedgerBatch[]): Promise<BatchOutcome[]> {
    const wallets = new Map<string, WalletRef>();
    const keys = new Map<string, LedgerKey>();
    const holds: HoldRef[] = [];
    const reversals: TransactionRef[] = [];
    // The most each wallet's grants may be drawn on: what its debits, holds and outgoing transfers
    // ask, and the restrictions to categories they ask it under (each listed once).
    const needs = new Map<string, GrantNeed & { restrictions: (readonly string[] | null)[] }>();
    const need = (projectId: string, walletId: string, amount: number, categories: readonly string[] | null) => {
      const known = needs.get(`${projectId} ${walletId}`) ?? { projectId, walletId, amount: 0, restrictions: [] };
      const restriction = categories === null ? null : [...categories].sort();
      const text = (one: readonly string[] | null) => (one === null ? '' : one.join(' '));
      const listed = known.restrictions.some((one) => text(one) === text(restriction));
      needs.set(`${projectId} ${walletId}`, {
        ...known,
        amount: known.amount + amount,
        restrictions: listed ? known.restrictions : [...known.restrictions, restriction],
      });
    };
    for (const batch of batches) {
      for (const movement of batch.movements) {
        const { projectId } = batch;
        if (movement.type === 'capture' || movement.type === 'void') {
          holds.push({ projectId, holdId: movement.holdId });
          continue;
        }
        if (movement.type === 'reverse') {
          reversals.push({ projectId, transactionId: movement.transactionId });
          const key = movementKey(projectId, movement);
          if (key !== undefined) keys.set(`${key.projectId}\n${key.scope}\n${key.key}`, key);
          continue;
        }
        const named = movement.type === 'transfer' ? [movement.fromWalletId, movement.toWalletId] : [movement.walletId];
        for (const walletId of named) wallets.set(`${projectId} ${walletId}`, { projectId, walletId });
        if (movement.type === 'debit' || movement.type === 'hold') need(projectId, movement.walletId, movement.amount, movement.categories);
        if (movement.type === 'transfer') need(projectId, movement.fromWalletId, movement.amount, movement.categories);
        const key = movementKey(projectId, movement);
        if (key !== undefined) keys.set(`${key.projectId}\n${key.scope}\n${key.key}`, key);
      }
    }
    for (const wallet of await holdWallets(trx, holds)) wallets.set(`${wallet.projectId} ${wallet.walletId}`, wallet);
    // A reversal locks the wallets of the transaction it reverses, may draw on the grants of a
    // transfer's receiving wallet, and gives back to (or takes back from) the grants it names.
    const originals = await findReversible(trx, reversals);
    const reversedGrants: string[] = [];
    for (const original of originals) {
      const projectId = original.project_id;
      for (const walletId of [original.wallet_id, original.from_wallet_id, original.to_wallet_id]) {
        if (walletId !== null) wallets.set(`${projectId} ${walletId}`, { projectId, walletId });
      }
      if (original.type === 'transfer' && original.to_wallet_id !== null) need(projectId, original.to_wallet_id, original.amount, null);
      reversedGrants.push(...parseSources(original.sources).map((source) => source.grant_id));
    }
    const statements = this.#statements;
    const locked = await statements.lockWallets(trx, [...wallets.values()]);
    const lockedRefs = locked.map((row) => ({ projectId: row.project_id, walletId: row.id }));
    const keyList = [...keys.values()];
    const now = isoTime(this.#clock.now());
    const holdRows = await loadHolds(trx, { named: holds, wallets: lockedRefs, now });
    const pending = holdRows.filter((hold) => hold.status === 'pending');
    const reserved = pending.flatMap((hold) => parseSources(hold.sources));
    // A hold that reserved part of its amount on the credit limit draws that part, at its capture,
    // on the grants free then (docs/adr/0023-credit-limits.md).
    for (const hold of pending) {
      const onLimit = hold.amount - parseSources(hold.sources).reduce((sum, source) => sum + source.amount, 0);
      if (onLimit > 0) need(hold.project_id, hold.wallet_id, onLimit, null);
    }
    const reversed = await reversedAmounts(
      trx,
      originals.map((row) => ({ projectId: row.project_id, transactionId: row.id })),
    );
    const plan = new LedgerPlan({
      wallets: locked,
      keyedTransactions: await statements.findKeyedTransactions(trx, keyList),
      keyedRefusals: await statements.findKeyedRefusals(trx, keyList),
      keyedHolds: await findKeyedHolds(trx, keyList),
      holds: holdRows,
      reversible: originals.map((row) => ({ row, reversed: reversed.get(`${row.project_id} ${row.id}`) ?? 0 })),
      grants: await loadGrants(trx, {
        needs: [...needs.values()],
        wallets: lockedRefs,
        grantIds: [...new Set([...reserved.map((source) => source.grant_id), ...reversedGrants])],
        now,
      }),
      now,
    });
    plan.settleExpired();
    const answered = await this.#storedAnswers(trx, batches);
    const keyRows: IdempotencyKeysTable[] = [];
    const outcomes = batches.map((batch): BatchOutcome => {
      const stored = answered.get(batch);
      if (stored !== undefined) return { outcomes: [], refusedAt: undefined, answer: stored };
      const outcome = plan.apply(batch);
      if (batch.requestKey === undefined) return outcome;
      const { answer, row } = batch.requestKey.complete(outcome);
      keyRows.push(row);
      return { ...outcome, answer: { kind: 'answered', answer } };
    });
    await statements.writeBalances(trx, plan.balanceWrites());
    await statements.insertTransactions(trx, plan.transactions);
    await statements.insertEntries(trx, plan.entries);
    await insertGrants(trx, plan.grants.inserts());
    await statements.updateGrants(trx, plan.grants.updates());
    await writeHolds(trx, { inserts: plan.holds.inserts(), updates: plan.holds.updates() });
    await recordEvents(trx, plan.events);
    // The keys of the movements and of the requests with their answers, in the transaction of what
    // they answer for (docs/adr/0004-idempotency.md). Two processes flushing one key: the second
    // waits on the first's row, fails on the primary key once it commits, and its next try replays it.
    const movementKeys = movementKeyRows({ transactions: plan.transactions, holds: plan.holds.inserts(), refusals: plan.refusals, now });
    await insertCompletedKeys(trx, [...movementKeys, ...keyRows]);
    return outcomes;
  }

  /**
   * The batches whose request key was stored before this flush: by another process since the HTTP
   * layer looked (replayed, nothing applied), or under another request (refused). A row that no
   * longer counts (expired, or a claim without its change from an older release) is removed.
   */
  async #storedAnswers(trx: DbTransaction, batches: readonly LedgerBatch[]): Promise<Map<LedgerBatch, RequestAnswer>> {
    const answers = new Map<LedgerBatch, RequestAnswer>();
    const keyed = batches.filter((batch) => batch.requestKey !== undefined);
    if (keyed.length === 0) return answers;
    const rows = await findKeys(
      trx,
      keyed.map((batch) => batch.requestKey?.name).filter((name) => name !== undefined),
    );
    for (const batch of keyed) {
      const requestKey = batch.requestKey;
      const row = rows.find(
        (one) => one.project_id === requestKey?.name.projectId && one.scope === requestKey.name.scope && one.key === requestKey.name.key,
      );
      if (requestKey === undefined || row === undefined) continue;
      try {
        const answer = requestKey.storedAnswer(row);
        if (answer === undefined) await deleteStaleKey(trx, requestKey.name, this.#clock.now());
        else answers.set(batch, { kind: 'replayed', answer });
      } catch (error) {
        if (!isApiError(error)) throw error;
        answers.set(batch, { kind: 'refused', error });
      }
    }
    return answers;
  }
}

/** A refused movement's audit entry: what was asked, and the refusal's code as the outcome. */
function refusalRecord(
  projectId: string,
  movement: MovementRequest & { type: 'credit' | 'debit' | 'transfer' | 'reverse' },
  code: string,
  createdAt: string,
): AuditRecord {
  // The id the movement's transaction would have had; none was written.
  const transactionId = newId('txn');
  if (movement.type === 'reverse') {
    // The transaction asked to be reversed may not exist: the entry is about it, not a wallet.
    const changes: Record<string, string | number> = { transaction_id: transactionId, reverses: movement.transactionId };
    if (movement.amount !== undefined) changes['amount'] = movement.amount;
    return {
      projectId,
      action: 'wallet.reversal',
      resource: { type: 'transaction', id: movement.transactionId },
      changes,
      outcome: code,
      createdAt,
    };
  }
  if (movement.type === 'transfer') {
    return {
      projectId,
      action: 'wallet.transfer',
      resource: { type: 'wallet', id: movement.fromWalletId },
      changes: { transaction_id: transactionId, to_wallet_id: movement.toWalletId, amount: movement.amount },
      outcome: code,
      createdAt,
    };
  }
  return {
    projectId,
    action: movement.type === 'credit' ? 'wallet.credit' : 'wallet.debit',
    resource: { type: 'wallet', id: movement.walletId },
    changes: { transaction_id: transactionId, amount: movement.amount },
    outcome: code,
    createdAt,
  };
}

import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction as DbTransaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvents } from '../events/events.service.js';
import { GroupCommit } from './group-commit.js';
import type { BatchOutcome, LedgerBatch, MovementRequest } from './ledger.movements.js';
import { LedgerPlan, movementKey } from './ledger.plan.js';
import { type LedgerKey, type LedgerStatements, ledgerStatements, type WalletRef } from './ledger.statements.js';

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
 * 1. locks every wallet they name (PostgreSQL: `FOR UPDATE`, in id order),
 * 2. looks up every idempotency key they carry (transactions made under it, refusals stored with it),
 * 3. applies the movements in memory, in order, against the locked balances (`LedgerPlan`): the
 *    rules decide each outcome before anything is written,
 * 4. writes the balances, the transactions, their entries, the keyed refusals and the outbox events
 *    (through the events module), one statement each for the whole flush.
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
      if (movement !== undefined) records.push(refusalRecord(batch.projectId, movement, outcome.error.code, createdAt));
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
    for (const batch of batches) {
      for (const movement of batch.movements) {
        const named = movement.type === 'transfer' ? [movement.fromWalletId, movement.toWalletId] : [movement.walletId];
        for (const walletId of named) wallets.set(`${batch.projectId} ${walletId}`, { projectId: batch.projectId, walletId });
        const key = movementKey(batch.projectId, movement);
        if (key !== undefined) keys.set(`${key.projectId}\n${key.scope}\n${key.key}`, key);
      }
    }
    const statements = this.#statements;
    const locked = await statements.lockWallets(trx, [...wallets.values()]);
    const keyList = [...keys.values()];
    const plan = new LedgerPlan({
      wallets: locked,
      keyedTransactions: await statements.findKeyedTransactions(trx, keyList),
      keyedRefusals: await statements.findKeyedRefusals(trx, keyList),
      now: isoTime(this.#clock.now()),
    });
    const outcomes = batches.map((batch) => plan.apply(batch));
    await statements.writeBalances(trx, plan.balanceWrites());
    await statements.insertTransactions(trx, plan.transactions);
    await statements.insertEntries(trx, plan.entries);
    await statements.insertRefusals(trx, plan.refusals);
    await recordEvents(trx, plan.events);
    return outcomes;
  }
}

/** A refused movement's audit entry: what was asked, and the refusal's code as the outcome. */
function refusalRecord(projectId: string, movement: MovementRequest, code: string, createdAt: string): AuditRecord {
  // The id the movement's transaction would have had; none was written.
  const transactionId = newId('txn');
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

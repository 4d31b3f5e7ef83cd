// The floor of a SQLite credit (scenarios/floor.js): what the least a credit must do costs on this
// stack, with everything around it taken away. Bare Fastify (logger off, no credential, no schema,
// no idempotency, no hooks, no metrics) in front of the credit's own statements on the service's
// own schema and connection settings (`openDatabase` from the built service): the wallet's
// conditional update, the transaction, its two entries, its grant and its event, and, as FLOOR_AUDIT asks,
// nothing more (`none`), the audit entry alone (`entry`), or the entry with its link of the hash
// chain (`chained`, what the service writes). Many credits share one transaction and one commit,
// and none gets a SAVEPOINT: a credit here cannot be refused. Never for anything but the benchmark.
//
// FLOOR_AUDIT=writer is the floor of the ledger's one write path on either dialect: bare Fastify in
// front of the service's own `LedgerWriter` (its group commit and its statements, with no audit
// entry), the credit without any of the service's HTTP layer (credential, schema, idempotency
// hook, audit context, logging, metrics). A credit's `Idempotency-Key` header becomes its movement
// key, and `POST /v1/wallets/batch` applies a batch of credits with its header's key written in
// the same transaction, so the floor writes every row the service writes. With it, a debit
// (`POST /v1/wallets/:id/debits`) and a hold (`POST /v1/wallets/:id/holds`, the service's default
// expiry) go through the same write path, as the service's routes send them.
//
// Environment: DATA_DIR (a database migrated by `svc`, with the project FLOOR_PROJECT_ID), or
// DATABASE_URL for PostgreSQL (FLOOR_AUDIT=writer only), PORT, FLOOR_AUDIT, FLOOR_WALLETS (made at
// the first start, default 1000), SQLITE_SYNCHRONOUS.
import Fastify from 'fastify';
import { join } from 'node:path';
import { setImmediate } from 'node:timers';
import { openDatabase } from '../packages/server/dist/db/database.js';
import { appendChainedSqlite } from '../packages/server/dist/modules/audit/audit.chain.js';
import { insertUnchainedEntry } from '../packages/server/dist/modules/audit/audit.store.js';
import { newId } from '../packages/server/dist/lib/ids.js';
import { AuditService } from '../packages/server/dist/modules/audit/audit.service.js';
import { ledgerAuditSource } from '../packages/server/dist/modules/ledger/ledger.audit.js';
import { HOLD_EXPIRES_IN_SECONDS_DEFAULT } from '../packages/server/dist/modules/ledger/holds.schemas.js';
import { GRANT_PRIORITY_DEFAULT } from '../packages/server/dist/modules/ledger/ledger.movements.js';
import { CATEGORY_DEFAULT } from '../packages/server/dist/modules/ledger/ledger.categories.js';
import { LedgerWriter } from '../packages/server/dist/modules/ledger/ledger.write.js';
import { systemClock } from '../packages/server/dist/lib/clock.js';

const AUDIT_VARIANTS = ['none', 'entry', 'chained', 'writer'];
const BALANCE_MAX = 9_007_199_254_740_991;
/** As the service's group commit: writes per commit at the most. */
const BATCH_SIZE_MAX = 128;

const audit = process.env.FLOOR_AUDIT ?? 'chained';
if (!AUDIT_VARIANTS.includes(audit)) throw new Error(`FLOOR_AUDIT must be one of ${AUDIT_VARIANTS.join(', ')}`);
const projectId = process.env.FLOOR_PROJECT_ID;
if (projectId === undefined) throw new Error('FLOOR_PROJECT_ID is required');
const walletCount = Number(process.env.FLOOR_WALLETS ?? '1000');
if (!Number.isInteger(walletCount) || walletCount < 1 || walletCount > 1_000_000)
  throw new Error('FLOOR_WALLETS must be a whole number from 1 to 1,000,000');
const postgresUrl = process.env.DATABASE_URL;
if (postgresUrl !== undefined && audit !== 'writer') throw new Error('on PostgreSQL the floor is FLOOR_AUDIT=writer');
const db = openDatabase(
  postgresUrl === undefined
    ? {
        dialect: 'sqlite',
        file: join(process.env.DATA_DIR ?? './data', 'svc.sqlite'),
        synchronous: process.env.SQLITE_SYNCHRONOUS === 'normal' ? 'normal' : 'full',
      }
    : { dialect: 'postgres', url: postgresUrl, poolSize: 10, preparedStatements: true },
);
const { sqlite, kysely, destroy } = db;

const SQL = {
  begin: 'begin immediate',
  commit: 'commit',
  credit:
    'update wallets set balance = balance + ?, updated_at = ? where project_id = ? and id = ? and status = ? and balance <= ? ' +
    'returning balance, currency',
  transaction:
    'insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata, idempotency_key, ' +
    "idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at) values (?, ?, 'credit', ?, ?, null, '{}', null, ?, ?, null, null, ?)",
  entries:
    'insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at) ' +
    'values (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, null, ?)',
  event: "insert into events (id, project_id, type, data, idempotency_key, created_at) values (?, ?, 'wallet.credit.added', ?, ?, ?)",
  // Every credit is a grant the wallet's debits draw on (docs/adr/0018-holds-and-grants.md).
  grant:
    'insert into wallet_grants (id, project_id, wallet_id, transaction_id, amount, remaining, held, expired, priority, expires_at, created_at) ' +
    'values (?, ?, ?, ?, ?, ?, 0, 0, ?, null, ?)',
  newWallet:
    "insert into wallets (id, project_id, user_id, currency, balance, status, metadata, low_balance_threshold, created_at, updated_at) values (?, ?, 'usr_floor', 'USD', 0, 'active', '{}', null, ?, ?)",
};

async function seedWallets() {
  const existing = await kysely
    .selectFrom('wallets')
    .select(kysely.fn.countAll().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (Number(existing?.count ?? 0) > 0) return;
  const now = new Date().toISOString();
  const rows = Array.from({ length: walletCount }, () => ({
    id: newId('wlt'),
    project_id: projectId,
    user_id: 'usr_floor',
    currency: 'USD',
    balance: 0,
    status: 'active',
    metadata: '{}',
    low_balance_threshold: null,
    created_at: now,
    updated_at: now,
  }));
  for (let start = 0; start < rows.length; start += 500)
    await kysely
      .insertInto('wallets')
      .values(rows.slice(start, start + 500))
      .execute();
}

/** FLOOR_AUDIT=writer: the service's own write path, with nothing of its HTTP layer and no audit entry. */
const writer =
  audit === 'writer'
    ? new LedgerWriter({
        db,
        clock: systemClock,
        audit: new AuditService({ db, clock: systemClock, ledger: ledgerAuditSource(db), recording: false }),
      })
    : undefined;
const FLOOR_CONTEXT = { actor: { type: 'secret_key', id: 'key_floor' }, requestId: null, ip: null, userAgent: null };

/**
 * A single route's movement as the service builds it from a body of `{ amount }` alone
 * (`LedgerService.credit`, `debit`, `hold`); a keyed one's key is the movement's own, written with
 * its transaction, as in the service.
 */
function singleMovement(type, walletId, amount, idempotencyKey) {
  const common = { type, walletId, amount, description: null, metadata: {}, idempotencyKey };
  if (type === 'credit') return { ...common, priority: GRANT_PRIORITY_DEFAULT, expiresAt: null, category: CATEGORY_DEFAULT };
  if (type === 'debit') return { ...common, categories: null };
  return { ...common, expiresInSeconds: HOLD_EXPIRES_IN_SECONDS_DEFAULT, categories: null };
}

/** A credit, debit or hold through the write path; returns the answer's body. */
async function applyThroughWriter(type, walletId, amount, requestId, idempotencyKey) {
  const { outcomes } = await writer.apply({
    projectId,
    context: { ...FLOOR_CONTEXT, requestId },
    movements: [singleMovement(type, walletId, amount, idempotencyKey)],
    atomic: false,
  });
  const [outcome] = outcomes;
  if (!outcome.ok) throw new Error(`floor: ${type} refused: ${outcome.error.code}`);
  return JSON.stringify(outcome.value);
}

/**
 * A batch of credits through the write path, its request key written with its answer in the same
 * transaction (`LedgerBatch.requestKey`), as the service does for `POST /v1/wallets/batch` with an
 * Idempotency-Key: the rows are the service's, the key's row unsealed (sealing is the HTTP layer's).
 */
async function batchThroughWriter(operations, requestId, key) {
  const movements = operations.map((operation) => singleMovement('credit', operation.wallet_id, operation.amount, undefined));
  const requestKey =
    key === undefined
      ? undefined
      : {
          name: { projectId, scope: '', key },
          storedAnswer: () => undefined,
          complete: (outcome) => {
            const body = JSON.stringify({
              object: 'batch',
              results: outcome.outcomes.map((one) => ({ status: 201, transaction: one.value })),
            });
            const now = new Date().toISOString();
            const row = {
              project_id: projectId,
              scope: '',
              key,
              request_hash: 'floor',
              request_fields: '{}',
              state: 'completed',
              lock_id: null,
              locked_until: null,
              response_status: 200,
              response_body: body,
              created_at: now,
              expires_at: null,
            };
            return { answer: { status: 200, body }, row };
          },
        };
  const outcome = await writer.apply({ projectId, context: { ...FLOOR_CONTEXT, requestId }, movements, atomic: false, requestKey });
  if (outcome.answer?.kind !== 'answered' && requestKey !== undefined) throw new Error('floor: the batch was not answered');
  return (
    outcome.answer?.answer.body ??
    JSON.stringify({ object: 'batch', results: outcome.outcomes.map((one) => ({ status: 201, transaction: one.value })) })
  );
}

/** One credit's writes, in the open transaction; returns what the service would answer. */
function credit(request, now) {
  const { walletId, amount } = request;
  const wallet = sqlite.get(SQL.credit, [amount, now, projectId, walletId, 'active', BALANCE_MAX - amount]);
  if (wallet === undefined) throw new Error(`floor: wallet ${walletId} is not an active wallet of the project`);
  const transactionId = newId('txn');
  sqlite.run(SQL.transaction, [transactionId, projectId, wallet.currency, amount, walletId, walletId, now]);
  sqlite.run(SQL.entries, [
    projectId,
    transactionId,
    walletId,
    amount,
    wallet.balance,
    now,
    projectId,
    transactionId,
    `issuance:${wallet.currency}`,
    -amount,
    now,
  ]);
  const data = JSON.stringify({
    wallet_id: walletId,
    transaction_id: transactionId,
    amount,
    balance_after: wallet.balance,
    currency: wallet.currency,
  });
  sqlite.run(SQL.grant, [newId('grt'), projectId, walletId, transactionId, amount, amount, GRANT_PRIORITY_DEFAULT, now]);
  sqlite.run(SQL.event, [newId('evt'), projectId, data, `${transactionId}:wallet.credit.added`, now]);
  if (audit !== 'none') writeAuditEntry(request, transactionId, wallet.balance, now);
  return {
    id: transactionId,
    object: 'transaction',
    type: 'credit',
    wallet_id: walletId,
    amount,
    balance_after: wallet.balance,
    description: null,
    metadata: {},
    idempotency_key: null,
    status: 'completed',
    created_at: now,
  };
}

function writeAuditEntry(request, transactionId, balanceAfter, now) {
  const row = {
    id: newId('aud'),
    project_id: projectId,
    created_at: now,
    action: 'wallet.credit',
    actor_type: 'secret_key',
    actor_id: 'key_floor',
    actor_user_id: null,
    resource_type: 'wallet',
    resource_id: request.walletId,
    request_id: request.requestId,
    ip: request.ip,
    user_agent: request.userAgent,
    outcome: 'success',
    // Sorted keys, as the service's canonical JSON.
    changes: JSON.stringify({
      amount: request.amount,
      balance_after: balanceAfter,
      balance_before: balanceAfter - request.amount,
      transaction_id: transactionId,
    }),
  };
  // The service's own statements and hash (`appendEntries` on SQLite), or its entry alone.
  if (audit === 'entry') insertUnchainedEntry(sqlite, row);
  else appendChainedSqlite(sqlite, row);
}

/** 201 with the write path's answer; a refusal is a broken setup (a floor never refuses), so a 500 the run counts. */
function replyThroughWriter(type, request, reply) {
  applyThroughWriter(type, request.params.id, request.body.amount, request.id, request.headers['idempotency-key']).then(
    (body) => void reply.code(201).type('application/json').send(body),
    (error) => void reply.code(500).send({ error: String(error) }),
  );
  return reply;
}

let queue = [];
let scheduled = false;

/** Group commit: everything queued by the next turn of the event loop shares one transaction. */
function drain() {
  while (queue.length > 0) {
    const batch = queue.splice(0, BATCH_SIZE_MAX);
    const now = new Date().toISOString();
    sqlite.run(SQL.begin, []);
    let answers;
    try {
      answers = batch.map((request) => credit(request, now));
      sqlite.run(SQL.commit, []);
    } catch (error) {
      // A floor credit is never refused: this is a broken setup, and the run must fail loudly.
      sqlite.run('rollback', []);
      for (const request of batch) void request.reply.code(500).send({ error: String(error) });
      continue;
    }
    batch.forEach((request, index) => void request.reply.code(201).send(answers[index]));
  }
  scheduled = false;
}

await seedWallets();
const app = Fastify({ logger: false });
app.get('/wallets', async () => {
  const rows = await kysely.selectFrom('wallets').select('id').where('project_id', '=', projectId).orderBy('id').execute();
  return { data: rows.map((row) => row.id) };
});
app.post('/v1/wallets/:id/credits', (request, reply) => {
  if (writer !== undefined) return replyThroughWriter('credit', request, reply);
  queue.push({
    walletId: request.params.id,
    amount: request.body.amount,
    requestId: request.id,
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    reply,
  });
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
  return reply;
});
/** A debit or a hold of `{ amount }`, as the service's routes: only the write path's floor has them. */
for (const [type, path] of [
  ['debit', '/v1/wallets/:id/debits'],
  ['hold', '/v1/wallets/:id/holds'],
])
  app.post(path, (request, reply) => {
    if (writer === undefined) return reply.code(404).send({ error: `${type}s need FLOOR_AUDIT=writer` });
    return replyThroughWriter(type, request, reply);
  });
app.post('/v1/wallets/batch', (request, reply) => {
  if (writer === undefined) return reply.code(404).send({ error: 'batches need FLOOR_AUDIT=writer' });
  batchThroughWriter(request.body.operations, request.id, request.headers['idempotency-key']).then(
    (body) => void reply.code(200).type('application/json').send(body),
    (error) => void reply.code(500).send({ error: String(error) }),
  );
  return reply;
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? '0') });

function stop() {
  void app
    .close()
    .then(() => destroy())
    .then(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

// The floor of the two session reads (scenarios/sessions.js): bare Fastify (logger off, no hooks,
// no credential, no schema validation) in front of the least each route must read, as prepared
// statements on the service's own schema, answering the same JSON the service answers.
// - POST /validate: the session token from the body; ONE read of the session joined to its user;
//   the token's hash compared; revoked and expired refused; {valid, user, session}.
// - GET /balance: the session token from `Authorization: Bearer`; ONE read of the session joined
//   to the user's oldest active wallet (its balance), then the wallet's last 20 transactions;
//   {balance, transactions}, with each transaction's actor, request id and sources as the service
//   shows them (and `available`, here balance − held: the floor assumes nothing expired).
// Never for anything but the benchmark.
//
// Environment: PORT, and DATA_DIR (SQLite, `svc.sqlite` there) or DATABASE_URL (PostgreSQL).
import { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { SqliteDriver as Database } from '../packages/server/dist/db/sqlite-driver.js';
import Fastify from 'fastify';
import pg from 'pg';

const SESSION_USER =
  'select s.id, s.project_id, s.user_id, s.token_hash, s.ip, s.user_agent, s.created_at, s.last_used_at, s.expires_at, ' +
  's.refresh_expires_at, s.revoked_at, s.revoked_reason, u.email, u.name, u.email_verified_at, u.roles, u.metadata, u.banned_at, ' +
  'u.created_at as user_created_at, u.updated_at as user_updated_at ' +
  'from sessions s join users u on u.project_id = s.project_id and u.id = s.user_id where s.id = ?';
const SESSION_WALLET =
  'select s.project_id, s.token_hash, s.expires_at, s.revoked_at, w.id as wallet_id, w.balance, w.held, w.currency from sessions s ' +
  "join wallets w on w.project_id = s.project_id and w.user_id = s.user_id and w.status = 'active' " +
  'where s.id = ? order by w.created_at, w.id limit 1';
const HISTORY =
  'select t.id, t.type, t.amount, t.description, t.metadata, t.idempotency_key, t.from_wallet_id, t.to_wallet_id, t.created_at, ' +
  't.actor_type, t.actor_id, t.actor_user_id, t.request_id, t.sources, ' +
  'e.amount as entry_amount, e.balance_after from ledger_entries e join ledger_transactions t on t.id = e.transaction_id ' +
  'where e.project_id = ? and e.account_id = ? order by e.seq desc limit 20';
const TOKEN = /^(svc_ses_[A-Za-z0-9]+)\.[A-Za-z0-9_-]+$/;

const read = openReader();

function openReader() {
  if (process.env.DATABASE_URL !== undefined) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    pool.on('error', () => undefined);
    // int8 as numbers, as the service reads them (every value here is a safe integer).
    pg.types.setTypeParser(20, Number);
    let index = 0;
    const named = (text) => {
      let parameter = 0;
      return { name: `floor_${(index += 1)}`, text: text.replace(/\?/g, () => `$${(parameter += 1)}`) };
    };
    const statements = { sessionUser: named(SESSION_USER), sessionWallet: named(SESSION_WALLET), history: named(HISTORY) };
    return {
      first: async (key, values) => (await pool.query({ ...statements[key], values })).rows[0],
      all: async (key, values) => (await pool.query({ ...statements[key], values })).rows,
    };
  }
  const database = new Database(join(process.env.DATA_DIR ?? './data', 'svc.sqlite'), { readonly: false });
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  const statements = {
    sessionUser: database.prepare(SESSION_USER),
    sessionWallet: database.prepare(SESSION_WALLET),
    history: database.prepare(HISTORY),
  };
  return {
    first: async (key, values) => statements[key].get(...values),
    all: async (key, values) => statements[key].all(...values),
  };
}

function tokenMatches(row, token) {
  const hash = createHash('sha256').update(token).digest('hex');
  return row !== undefined && timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(hash));
}

function actorOf(entry) {
  if (entry.actor_type === 'secret_key') return { type: 'secret_key', id: entry.actor_id };
  if (entry.actor_type === 'session') return { type: 'session', id: entry.actor_id, user_id: entry.actor_user_id };
  if (entry.actor_type === 'dashboard') return { type: 'dashboard', key_id: entry.actor_id };
  return { type: entry.actor_type };
}

function refusal(row, now) {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at <= now) return 'expired';
  return undefined;
}

const app = Fastify({ logger: false });
app.get('/ready', async () => ({ ok: true }));

app.post('/validate', async (request) => {
  const token = request.body?.session_id ?? '';
  const name = TOKEN.exec(token)?.[1];
  if (name === undefined) return { valid: false, reason: 'not_found' };
  const row = await read.first('sessionUser', [name]);
  if (!tokenMatches(row, token)) return { valid: false, reason: 'not_found' };
  const reason = refusal(row, new Date().toISOString());
  if (reason !== undefined) return { valid: false, reason };
  return {
    valid: true,
    user: {
      id: row.user_id,
      object: 'user',
      email: row.email,
      name: row.name,
      email_verified: row.email_verified_at !== null,
      roles: JSON.parse(row.roles),
      metadata: JSON.parse(row.metadata),
      banned: row.banned_at !== null,
      created_at: row.user_created_at,
      updated_at: row.user_updated_at,
    },
    session: {
      id: row.id,
      object: 'session',
      user_id: row.user_id,
      ip: row.ip,
      user_agent: row.user_agent,
      created_at: row.created_at,
      last_used_at: row.last_used_at,
      expires_at: row.expires_at,
      refresh_expires_at: row.refresh_expires_at,
      revoked_at: row.revoked_at,
      revoked_reason: row.revoked_reason,
    },
  };
});

app.get('/balance', async (request, reply) => {
  const token = (request.headers.authorization ?? '').slice('Bearer '.length);
  const name = TOKEN.exec(token)?.[1];
  const row = name === undefined ? undefined : await read.first('sessionWallet', [name]);
  if (!tokenMatches(row, token) || refusal(row, new Date().toISOString()) !== undefined) return reply.code(401).send({ error: 'session' });
  const rows = await read.all('history', [row.project_id, row.wallet_id]);
  return {
    balance: { credits: row.balance, currency: row.currency, available: row.balance - row.held },
    transactions: rows.map((entry) => {
      const outgoing = entry.entry_amount < 0;
      const type = entry.type !== 'transfer' ? entry.type : outgoing ? 'transfer_out' : 'transfer_in';
      const counterparty = entry.type !== 'transfer' ? null : outgoing ? entry.to_wallet_id : entry.from_wallet_id;
      return {
        id: entry.id,
        object: 'transaction',
        type,
        wallet_id: row.wallet_id,
        amount: entry.amount,
        balance_after: entry.balance_after,
        description: entry.description,
        metadata: JSON.parse(entry.metadata),
        idempotency_key: entry.idempotency_key,
        status: 'completed',
        created_at: entry.created_at,
        actor: actorOf(entry),
        request_id: entry.request_id,
        sources: entry.sources === null ? [] : JSON.parse(entry.sources),
        ...(counterparty === null ? {} : { counterparty_wallet_id: counterparty }),
      };
    }),
  };
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? '0') });

function stop() {
  void app.close().then(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

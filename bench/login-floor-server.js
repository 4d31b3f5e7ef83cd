// The floor of log in (scenarios/sessions.js): bare Fastify (logger off, no hooks, no credential,
// no schema validation, no throttle) in front of the least a log in must do, as prepared statements
// on the service's own schema: ONE read of the user by its email, the argon2id verify (the same
// library and parameters, off the main thread), then ONE transaction that writes the session, its
// `session.created` event and the audit entry, and the answer {user, session} with the tokens.
// What it leaves out is what the service adds around that: routing hooks, the secret key's check,
// the throttle, the second-factor check, Kysely. Its main thread per log in is the floor of the
// service's (docs/performance.md, "Log in"). Never for anything but the benchmark.
//
// Environment: PORT, PROJECT_ID, and DATA_DIR (SQLite, `svc.sqlite` there) or DATABASE_URL (PostgreSQL).
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { verify } from '@node-rs/argon2';
import Fastify from 'fastify';
import pg from 'pg';
import { SqliteDriver as Database } from '../packages/server/dist/db/sqlite-driver.js';

const USER_BY_EMAIL =
  'select id, project_id, email, name, password_hash, email_verified_at, roles, metadata, banned_at, created_at, updated_at ' +
  'from users where project_id = ? and email_key = ?';
const INSERT_SESSION =
  'insert into sessions (id, project_id, user_id, token_hash, refresh_token_hash, refresh_expires_at, chain_id, refreshed_at, ' +
  'replaced_by, successor_sealed, expires_at, ip, user_agent, created_at, last_used_at, revoked_at, revoked_reason) ' +
  'values (?, ?, ?, ?, ?, ?, ?, null, null, null, ?, ?, ?, ?, ?, null, null)';
const INSERT_EVENT = 'insert into events (id, project_id, type, data, idempotency_key, created_at) values (?, ?, ?, ?, ?, ?)';
const INSERT_AUDIT =
  'insert into audit_log (id, project_id, created_at, action, actor_type, actor_id, actor_user_id, resource_type, resource_id, ' +
  "request_id, ip, user_agent, outcome, changes) values (?, ?, ?, 'user.login', 'secret_key', ?, null, 'user', ?, ?, ?, ?, 'success', ?)";
const SESSION_TTL_MS = 24 * 3600 * 1000;
const REFRESH_TTL_MS = 30 * 24 * 3600 * 1000;

const projectId = process.env.PROJECT_ID ?? '';
const store = openStore();

function openStore() {
  if (process.env.DATABASE_URL !== undefined) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    pool.on('error', () => undefined);
    let index = 0;
    const named = (text) => {
      let parameter = 0;
      return { name: `login_floor_${(index += 1)}`, text: text.replace(/\?/g, () => `$${(parameter += 1)}`) };
    };
    const userByEmail = named(USER_BY_EMAIL);
    const writes = [named(INSERT_SESSION), named(INSERT_EVENT), named(INSERT_AUDIT)];
    return {
      user: async (values) => (await pool.query({ ...userByEmail, values })).rows[0],
      write: async (valuesOfEach) => {
        const client = await pool.connect();
        try {
          await client.query('begin');
          for (const [at, values] of valuesOfEach.entries()) await client.query({ ...writes[at], values });
          await client.query('commit');
        } catch (error) {
          await client.query('rollback').catch(() => undefined);
          throw error;
        } finally {
          client.release();
        }
      },
    };
  }
  const database = new Database(join(process.env.DATA_DIR ?? './data', 'svc.sqlite'), { readonly: false });
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  // The service's default (docs/configuration.md, SQLITE_SYNCHRONOUS): a commit is on disk when it returns.
  database.pragma('synchronous = FULL');
  const userByEmail = database.prepare(USER_BY_EMAIL);
  const writes = [database.prepare(INSERT_SESSION), database.prepare(INSERT_EVENT), database.prepare(INSERT_AUDIT)];
  const writeAll = database.transaction((valuesOfEach) => {
    for (const [at, values] of valuesOfEach.entries()) writes[at].run(...values);
  });
  return {
    user: async (values) => userByEmail.get(...values),
    write: async (valuesOfEach) => writeAll.immediate(valuesOfEach),
  };
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const token = (prefix) => `${prefix}${randomBytes(16).toString('hex')}`;

const app = Fastify({ logger: false });
app.get('/ready', async () => ({ ok: true }));
app.post('/login', async (request, reply) => {
  const body = request.body ?? {};
  const email = String(body.email ?? '')
    .trim()
    .toLowerCase();
  const user = await store.user([projectId, email]);
  if (user === undefined || !(await verify(user.password_hash, String(body.password ?? '')))) {
    return reply.code(401).send({ error: { type: 'invalid_request_error', code: 'credentials_invalid' } });
  }
  const now = new Date();
  const nowIso = now.toISOString();
  const name = token('svc_ses_');
  const sessionToken = `${name}.${randomBytes(24).toString('base64url')}`;
  const refreshToken = `svc_rt_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
  const refreshExpiresAt = new Date(now.getTime() + REFRESH_TTL_MS).toISOString();
  const ip = request.headers['x-end-user-ip'] ?? request.ip;
  const eventId = token('evt_');
  const userAgent = request.headers['user-agent'] ?? null;
  await store.write([
    [
      name,
      projectId,
      user.id,
      sha256(sessionToken),
      sha256(refreshToken),
      refreshExpiresAt,
      name,
      expiresAt,
      ip,
      userAgent,
      nowIso,
      nowIso,
    ],
    [eventId, projectId, 'session.created', JSON.stringify({ session_id: name, user_id: user.id }), eventId, nowIso],
    [token('aud_'), projectId, nowIso, 'floor', user.id, String(request.id), ip, userAgent, JSON.stringify({ session_id: name })],
  ]);
  const answer = {
    user: {
      id: user.id,
      object: 'user',
      email: user.email,
      name: user.name,
      email_verified: user.email_verified_at !== null,
      roles: typeof user.roles === 'string' ? JSON.parse(user.roles) : user.roles,
      metadata: typeof user.metadata === 'string' ? JSON.parse(user.metadata) : user.metadata,
      banned: user.banned_at !== null,
      created_at: user.created_at,
      updated_at: user.updated_at,
    },
    session: { id: sessionToken, expires_at: expiresAt, refresh_token: refreshToken, refresh_expires_at: refreshExpiresAt },
  };
  return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer));
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });

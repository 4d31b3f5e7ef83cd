import pg from 'pg';
import { isHostLost } from './connection-errors.js';
import type { PostgresHost, PostgresTarget } from './postgres-url.js';

/**
 * The connections of a DATABASE_URL that names several hosts (db/postgres-url.ts): a node-postgres
 * pool for the one host that takes writes, found by trying the hosts in the URL's order.
 *
 * Every new connection is checked before its first use (`target_session_attrs`: `read-write`
 * wants `transaction_read_only` off, `primary` wants a server not in recovery). When the host goes
 * away (a lost connection, a refused one, a server shutting down) or stops taking writes (25006
 * `read_only_sql_transaction`), the pool is forgotten and the next connection looks for the
 * writable host again, among all of them: a promoted standby is found with no restart. Until one
 * is found every attempt fails with `DatabaseUnavailableError`, which the HTTP layer answers with
 * 503 `service_unavailable` and `Retry-After` (docs/operations.md, "The standby and a failover,
 * step by step").
 */
export class FailoverPool {
  readonly #target: PostgresTarget;
  readonly #options: pg.PoolConfig;
  /** The writable host's pool once found; a search in progress is shared by every caller. */
  #current: Promise<pg.Pool> | undefined;
  #currentPool: pg.Pool | undefined;
  /** Pools forgotten and still closing: ended with the whole pool. */
  readonly #closing = new Set<Promise<void>>();
  /** Clients that passed the check, and the pool each came from. */
  readonly #checked = new WeakMap<pg.PoolClient, pg.Pool>();
  /** Clients whose connection failed: destroyed instead of going back to their pool. */
  readonly #broken = new WeakSet<pg.PoolClient>();
  #ended = false;

  /** `options` are node-postgres's, for every host's pool; the host itself comes from the target. */
  constructor(target: PostgresTarget, options: pg.PoolConfig) {
    this.#target = target;
    this.#options = options;
  }

  /** A connection to the host that takes writes; throws `DatabaseUnavailableError` when none does. */
  async connect(): Promise<pg.PoolClient> {
    // Two rounds: a pool found a moment ago may have lost its host since; the second round
    // searches again from the first host.
    for (let round = 1; ; round += 1) {
      const pool = await this.#writable();
      let client: pg.PoolClient | undefined;
      try {
        client = await pool.connect();
        if (!this.#checked.has(client)) {
          await this.#check(client);
          this.#checked.set(client, pool);
        }
        return client;
      } catch (error) {
        client?.release(true);
        this.#forget(pool);
        if (round >= 2) throw new DatabaseUnavailableError('The database host that took writes is gone.', error);
      }
    }
  }

  /**
   * Called with every error of a statement: one that says the host is gone or no longer takes
   * writes makes the pool search again, and the client is closed when it is released.
   */
  failed(client: pg.PoolClient, error: unknown): void {
    if (!isHostLost(error)) return;
    this.#broken.add(client);
    const pool = this.#checked.get(client);
    if (pool !== undefined) this.#forget(pool);
  }

  /** Gives a client back to its pool, or closes it when its connection failed. */
  release(client: pg.PoolClient): void {
    client.release(this.#broken.has(client) ? true : undefined);
  }

  async end(): Promise<void> {
    this.#ended = true;
    const current = this.#currentPool;
    this.#current = undefined;
    this.#currentPool = undefined;
    if (current !== undefined) this.#closing.add(current.end());
    await Promise.allSettled([...this.#closing]);
  }

  #writable(): Promise<pg.Pool> {
    if (this.#ended) return Promise.reject(new DatabaseUnavailableError('The database pool was closed.', undefined));
    if (this.#current === undefined) {
      const search = this.#search();
      this.#current = search;
      search.then(
        (pool) => {
          if (this.#current === search) this.#currentPool = pool;
        },
        () => {
          if (this.#current === search) this.#current = undefined;
        },
      );
    }
    return this.#current;
  }

  /** Tries the hosts in order; the first whose connection passes the check becomes the current pool. */
  async #search(): Promise<pg.Pool> {
    const refusals: string[] = [];
    for (const host of this.#target.hosts) {
      const pool = this.#poolFor(host);
      let client: pg.PoolClient | undefined;
      try {
        client = await pool.connect();
        await this.#check(client);
        this.#checked.set(client, pool);
        client.release();
        return pool;
      } catch (error) {
        client?.release(true);
        this.#closing.add(pool.end());
        refusals.push(`${host.host}:${host.port}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new DatabaseUnavailableError(`No database host takes writes (${refusals.join('; ')}).`, undefined);
  }

  #poolFor(host: PostgresHost): pg.Pool {
    const pool = new pg.Pool({
      ...this.#options,
      connectionString: host.url,
      connectionTimeoutMillis: this.#target.connectTimeoutMs,
    });
    // An idle client that loses its connection emits 'error' on the pool, and a client in use
    // emits it on itself besides failing its statement; without listeners either would end the
    // process (as in db/database.ts).
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    return pool;
  }

  async #check(client: pg.PoolClient): Promise<void> {
    if (this.#target.targetSessionAttrs === 'any') return;
    const result = await client.query<{ in_recovery: boolean; read_only: string }>(
      "select pg_is_in_recovery() as in_recovery, current_setting('transaction_read_only') as read_only",
    );
    const row = result.rows[0];
    // As libpq: `read-write` asks that the session take writes, `primary` that the server not be in recovery.
    const writable = row !== undefined && (this.#target.targetSessionAttrs === 'primary' ? !row.in_recovery : row.read_only === 'off');
    if (!writable) throw new DatabaseUnavailableError('The host does not take writes (a standby, or read-only).', undefined);
  }

  /** Drops `pool` if it is still the current one: the next connection searches again. */
  #forget(pool: pg.Pool): void {
    if (this.#currentPool !== pool) return;
    this.#current = undefined;
    this.#currentPool = undefined;
    // end() lets the clients in use finish (each is closed when released) and closes idle ones.
    const closing = pool.end().catch(() => undefined);
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }
}

/**
 * No host that takes writes could be reached. `code` is SQLSTATE 08001
 * (sqlclient_unable_to_establish_sqlconnection), which the HTTP layer answers with 503.
 */
export class DatabaseUnavailableError extends Error {
  readonly code = '08001';

  constructor(message: string, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

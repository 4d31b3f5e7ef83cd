import { resolve } from 'node:path';
import { needsHostSelection, parsePostgresUrl, type PostgresTarget, PostgresUrlError } from './db/postgres-url.js';
import { ConfigError, type Env, flag, integer, nonEmpty, oneOf } from './config-parsing.js';

export type DatabaseConfig =
  | { readonly dialect: 'sqlite'; readonly file: string; readonly synchronous: 'full' | 'normal' }
  | {
      readonly dialect: 'postgres';
      readonly url: string;
      readonly poolSize: number;
      /**
       * Set when the URL names several hosts or asks for one that takes writes
       * (`target_session_attrs`): the service picks the host itself (db/failover-pool.ts).
       */
      readonly target?: PostgresTarget;
      /**
       * DATABASE_PREPARED_STATEMENTS: true keeps named prepared statements and the connection's
       * `jit=off` startup option; false keeps no state on a connection beyond one transaction, for a
       * transaction-mode pooler such as PgBouncer (docs/operations.md, "Poolers").
       */
      readonly preparedStatements: boolean;
    };

/** `DATABASE_URL` (SQLite under `DATA_DIR` when unset) and the settings of its dialect. */
export function databaseConfig(env: Env, dataDir: string): DatabaseConfig {
  const url = nonEmpty(env['DATABASE_URL']);
  if (url === undefined || url.startsWith('sqlite:')) {
    const file = url === undefined ? resolve(dataDir, 'svc.sqlite') : resolve(url.slice('sqlite:'.length).replace(/^\/\//, ''));
    return { dialect: 'sqlite', file, synchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', ['full', 'normal'], 'full') };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const poolSize = integer(env, 'DATABASE_POOL_SIZE', 20, { min: 1, max: 500 });
    const preparedStatements = flag(env, 'DATABASE_PREPARED_STATEMENTS', true);
    let target: PostgresTarget;
    try {
      target = parsePostgresUrl(url);
    } catch (error) {
      if (error instanceof PostgresUrlError) throw new ConfigError('DATABASE_URL', error.message);
      throw error;
    }
    return needsHostSelection(target)
      ? { dialect: 'postgres', url, poolSize, preparedStatements, target }
      : { dialect: 'postgres', url, poolSize, preparedStatements };
  }
  throw new ConfigError('DATABASE_URL', 'must start with postgres://, postgresql:// or sqlite:');
}

/**
 * True when `error` says the connection to the database was lost, not that a statement was wrong:
 * node-postgres reports a connection that ended under a query by message only, with no code.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return /Connection terminated|not queryable|Connection ended|connection error/i.test(error.message);
}

/** SQLSTATEs and socket codes that say the host is gone or no longer takes writes. */
const HOST_LOST_CODES: ReadonlySet<string> = new Set([
  '25006', // read_only_sql_transaction: the host is (now) a standby
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/**
 * True when `error` says the database host is gone, cannot take connections now, or no longer
 * takes writes: the request may succeed when sent again, once the host (or a promoted standby) is
 * back. The HTTP layer answers it with 503 `service_unavailable` and `Retry-After`.
 */
export function isHostLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && HOST_LOST_CODES.has(code)) || isConnectionLost(error);
}

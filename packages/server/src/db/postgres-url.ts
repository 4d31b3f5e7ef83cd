/**
 * A PostgreSQL URL that may name several hosts, as libpq reads it:
 * `postgres://user:password@h1:5432,h2:5433/db?target_session_attrs=read-write`. node-postgres
 * reads one host only and ignores `target_session_attrs`, so the service parses the list itself and
 * hands node-postgres one single-host URL per host (db/failover-pool.ts; docs/operations.md, "The
 * standby and a failover, step by step").
 */

/** What the service asks of the host it writes to. libpq's names; the ones that refuse writes are not accepted. */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';

export const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = ['any', 'read-write', 'primary'];

/** libpq's values that pick a host that does not take writes: the service writes, so they are refused. */
const READ_ONLY_SESSION_ATTRS: ReadonlySet<string> = new Set(['read-only', 'standby', 'prefer-standby']);

export const POSTGRES_DEFAULT_PORT = 5432;

/** Seconds libpq waits for one host before trying the next when `connect_timeout` is not given. */
export const CONNECT_TIMEOUT_SECONDS_DEFAULT = 5;

export interface PostgresHost {
  readonly host: string;
  readonly port: number;
  /** The URL with this host alone and without `target_session_attrs`, for node-postgres. */
  readonly url: string;
}

export interface PostgresTarget {
  /** In the order the URL names them, which is the order they are tried. */
  readonly hosts: readonly PostgresHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** How long a connection attempt to one host may take before the next is tried; 0 waits as long as it takes, as in libpq. */
  readonly connectTimeoutMs: number;
}

/** A DATABASE_URL that cannot be used; the message says why, and never repeats a password. */
export class PostgresUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostgresUrlError';
  }
}

const SCHEME = /^(postgres(?:ql)?:\/\/)/;

/**
 * The hosts and session attributes of a `postgres://` or `postgresql://` URL. A host without a
 * port gets 5432; `[…]` encloses an IPv6 address. `target_session_attrs` defaults to `any`, as in
 * libpq.
 */
export function parsePostgresUrl(url: string): PostgresTarget {
  const scheme = SCHEME.exec(url)?.[1];
  if (scheme === undefined) throw new PostgresUrlError('must start with postgres:// or postgresql://');
  const rest = url.slice(scheme.length);
  const authorityEnd = firstIndexOf(rest, ['/', '?', '#']);
  const authority = rest.slice(0, authorityEnd);
  const tail = rest.slice(authorityEnd);
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);

  const queryStart = tail.indexOf('?');
  const query = new URLSearchParams(queryStart === -1 ? '' : tail.slice(queryStart + 1).replace(/#.*$/, ''));
  const path = queryStart === -1 ? tail : tail.slice(0, queryStart);
  const targetSessionAttrs = sessionAttrs(query.get('target_session_attrs'));
  const connectTimeoutMs = connectTimeout(query.get('connect_timeout'));
  query.delete('target_session_attrs');
  const search = query.toString();

  const specs = hostList.split(',');
  if (specs.length > 1 && (query.has('host') || query.has('port'))) {
    throw new PostgresUrlError('names its hosts both before the path and in host= or port=; name them only before the path');
  }
  const hosts = specs.map((spec): PostgresHost => {
    const { host, port } = hostAndPort(spec, specs.length);
    const authorityOfOne = host === '' ? '' : `${host.includes(':') ? `[${host}]` : encodeURIComponent(host)}:${port}`;
    return { host, port, url: `${scheme}${userinfo}${authorityOfOne}${path}${search === '' ? '' : `?${search}`}` };
  });
  return { hosts, targetSessionAttrs, connectTimeoutMs };
}

/** True when the URL needs the service's own host selection: several hosts, or a host that must take writes. */
export function needsHostSelection(target: PostgresTarget): boolean {
  return target.hosts.length > 1 || target.targetSessionAttrs !== 'any';
}

function hostAndPort(spec: string, count: number): { host: string; port: number } {
  let host: string;
  let portText: string | undefined;
  if (spec.startsWith('[')) {
    const close = spec.indexOf(']');
    if (close === -1) throw new PostgresUrlError(`has an IPv6 host without its closing bracket: ${spec}`);
    host = spec.slice(1, close);
    const after = spec.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw new PostgresUrlError(`has text after an IPv6 host: ${spec}`);
    portText = after === '' ? undefined : after.slice(1);
  } else {
    const colon = spec.indexOf(':');
    host = decodeHost(colon === -1 ? spec : spec.slice(0, colon));
    portText = colon === -1 ? undefined : spec.slice(colon + 1);
  }
  if (host === '' && count > 1) throw new PostgresUrlError('names an empty host in its list of hosts');
  return { host, port: port(portText) };
}

function decodeHost(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new PostgresUrlError(`has a host that is not valid percent-encoding: ${text}`);
  }
}

function port(text: string | undefined): number {
  if (text === undefined || text === '') return POSTGRES_DEFAULT_PORT;
  const value = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 1 && value <= 65_535)) throw new PostgresUrlError(`has a port that is not a whole number from 1 to 65535: ${text}`);
  return value;
}

function sessionAttrs(value: string | null): TargetSessionAttrs {
  if (value === null || value === '') return 'any';
  if ((TARGET_SESSION_ATTRS as readonly string[]).includes(value)) return value as TargetSessionAttrs;
  if (READ_ONLY_SESSION_ATTRS.has(value)) {
    throw new PostgresUrlError(`target_session_attrs=${value} picks a host that does not take writes; the service writes: use read-write`);
  }
  throw new PostgresUrlError(`target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}, not ${value}`);
}

function connectTimeout(value: string | null): number {
  if (value === null || value === '') return CONNECT_TIMEOUT_SECONDS_DEFAULT * 1000;
  if (!/^\d{1,4}$/.test(value)) throw new PostgresUrlError(`connect_timeout must be a whole number of seconds, not ${value}`);
  return Number(value) * 1000;
}

function firstIndexOf(text: string, characters: readonly string[]): number {
  let first = text.length;
  for (const character of characters) {
    const index = text.indexOf(character);
    if (index !== -1 && index < first) first = index;
  }
  return first;
}

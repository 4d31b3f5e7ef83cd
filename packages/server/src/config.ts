import { isIP } from 'node:net';
import { resolve } from 'node:path';
import {
  checkedUrl,
  ConfigError,
  deepFreeze,
  duration,
  type Env,
  flag,
  integer,
  nonEmpty,
  oneOf,
  optionalUrl,
  retrySchedule,
  trustProxy,
  workerId,
} from './config-parsing.js';
import { KEY_ID_PATTERN, SINGLE_KEY_ID } from './lib/secret-box.js';
import { needsHostSelection, parsePostgresUrl, type PostgresTarget, PostgresUrlError } from './db/postgres-url.js';

export { ConfigError } from './config-parsing.js';

/**
 * The environment, parsed and validated once at start into a frozen object. Every variable is
 * documented in docs/configuration.md; a wrong value stops the process with a message that names
 * the variable, rather than surfacing later as odd behaviour.
 */
export interface Config {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly database: DatabaseConfig;
  readonly redisUrl: string | undefined;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Creates a default project with this key on first start (development and containers). */
  readonly bootstrapSecretKey: string | undefined;
  readonly rateLimit: RateLimitConfig;
  readonly trustProxy: boolean | string;
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly corsOrigins: readonly string[];
  readonly webhookAllowPrivate: boolean;
  /**
   * `WEBHOOK_RETRY_SCHEDULE`: seconds to wait before each delivery attempt (the first counted from
   * the event, each later one from the previous failure); its length is the number of attempts.
   */
  readonly webhookRetryScheduleSeconds: readonly number[];
  /**
   * `WEBHOOK_LEASE_SECONDS`: how long a worker holds a claimed delivery. A worker that dies leaves
   * its deliveries to others after this long; it must outlive the 10-s attempt timeout.
   */
  readonly webhookLeaseSeconds: number;
  /**
   * `WEBHOOK_IDLE_POLL_MS`: the longest wait of a delivery worker that keeps finding nothing to do
   * (docs/adr/0006-webhook-delivery.md, "Idle workers poll less"). Default 1 s.
   */
  readonly webhookIdlePollMs: number;
  /**
   * `WEBHOOK_DISABLE_AFTER_SECONDS`: an endpoint whose every attempt has failed for this long, with
   * at least 5 failed deliveries, is switched off (`disabled_reason: "failing"`). Default 5 days.
   */
  readonly webhookDisableAfterSeconds: number;
  /**
   * `WEBHOOK_WORKER_ID`: the delivery worker's identity, stable across restarts, unique among the
   * running workers. Unset: a slot claimed under `DATA_DIR` (docs/adr/0006-webhook-delivery.md).
   */
  readonly webhookWorkerId: string | undefined;
  /** `EVENT_RETENTION_DAYS`: events and webhook delivery logs older than this are deleted. */
  readonly eventRetentionDays: number;
  /** `AUDIT_RETENTION_DAYS`: audit entries older than this are removed, a whole sealed prefix at a time (default 365). */
  readonly auditRetentionDays: number;
  /**
   * `SHUTDOWN_TIMEOUT_SECONDS` (default 25), in milliseconds: how long a SIGTERM waits for requests
   * in flight before the process exits anyway, with status 1.
   */
  readonly shutdownTimeoutMs: number;
  /**
   * `REQUEST_TIMEOUT_MS`: a request whose headers and body have not all arrived this long after it
   * began is cut off (408 `request_timeout`). Default 30 s; handlers' own time does not count.
   */
  readonly requestTimeoutMs: number;
  /**
   * `METRICS_TOKEN`: when set, `GET /metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`;
   * unset, it is open (keep it off the public network then).
   */
  readonly metricsToken: string | undefined;
  /**
   * `DNS_SERVERS`: the resolvers that organization domains' TXT records are looked up at, each
   * `ip`, `ip:port` or `[ipv6]:port` as node:dns `setServers` takes them; empty → the system's.
   */
  readonly dnsServers: readonly string[];
  readonly auth: AuthConfig;
  readonly email: EmailConfig;
  readonly oauth: OAuthConfig;
  readonly secrets: SecretsConfig;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` and its companions; undefined: no traces, and no tracing code loaded. */
  readonly tracing: TracingConfig | undefined;
}

/** Where and how request traces go (lib/tracing.ts, docs/operations.md "Traces"). */
export interface TracingConfig {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; spans are posted to `<endpoint>/v1/traces`. */
  readonly endpoint: string;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (default) or `http/json`. */
  readonly protocol: 'http/protobuf' | 'http/json';
  /** `OTEL_SERVICE_NAME`, default `svc`: the `service.name` of every span. */
  readonly serviceName: string;
  /** `OTEL_BSP_SCHEDULE_DELAY` (default 5000): how long finished spans wait to be sent in one batch. */
  readonly scheduleDelayMs: number;
}

/** The keyring that seals secrets at rest (lib/secret-box.ts, docs/adr/0015-secrets-at-rest.md). */
export interface SecretsConfig {
  /**
   * `SECRETS_ENCRYPTION_KEYS` (`id:key` pairs, the first seals, all open), or
   * `SECRETS_ENCRYPTION_KEY` (one key, the id `default`); each key 32 bytes, kept as hex text (a
   * frozen config cannot hold a Buffer: typed arrays refuse Object.freeze). Required in production;
   * unset elsewhere → a key generated once and kept in `DATA_DIR/secrets.key`.
   */
  readonly keys: readonly { readonly id: string; readonly keyHex: string }[] | undefined;
}

/** Social and OpenID Connect sign-in (modules/oauth). */
export interface OAuthConfig {
  /** `OAUTH_ALLOW_INSECURE_HTTP=1`: `http://` provider addresses are allowed (development only). */
  readonly allowInsecureHttp: boolean;
  /** `OAUTH_ALLOW_PRIVATE=1`: provider addresses may be loopback or private (development and tests). */
  readonly allowPrivate: boolean;
  /** Where the built-in providers live; overridable so tests can point them at loopback servers. */
  readonly endpoints: OAuthEndpoints;
}

export interface OAuthEndpoints {
  /** `OAUTH_GOOGLE_ISSUER`, default `https://accounts.google.com`; discovered. */
  readonly googleIssuer: string;
  /** `OAUTH_APPLE_ISSUER`, default `https://appleid.apple.com`; discovered. */
  readonly appleIssuer: string;
  /** `OAUTH_GITHUB_URL`, default `https://github.com`: `/login/oauth/authorize` and `/login/oauth/access_token`. */
  readonly githubUrl: string;
  /** `OAUTH_GITHUB_API_URL`, default `https://api.github.com`: `/user` and `/user/emails`. */
  readonly githubApiUrl: string;
}

export const SESSION_JWT_ALGS = ['ES256', 'RS256', 'EdDSA'] as const;
export type SessionJwtAlg = (typeof SESSION_JWT_ALGS)[number];
/** The longest a session JWT may live, whatever the configuration: how long a retired key stays published. */
export const SESSION_JWT_TTL_SECONDS_MAX = 3600;

export interface AuthConfig {
  /** Lifetime of a session token (`SESSION_TTL`, default 24 h). */
  readonly sessionTtlSeconds: number;
  /** Lifetime of a refresh token (`REFRESH_TTL`, default 30 days); each refresh starts a new one. */
  readonly refreshTtlSeconds: number;
  /**
   * `REFRESH_REUSE_GRACE_SECONDS` (default 0): how long a used refresh token presented again
   * answers the same new session again (a client's network retry) instead of counting as reuse.
   */
  readonly refreshReuseGraceSeconds: number;
  /**
   * `REAUTH_WINDOW_SECONDS` (default 600): how recently a session's user must have signed in or
   * reauthenticated to add a passkey or an authenticator, remove one, or change the password.
   */
  readonly reauthWindowSeconds: number;
  /** `SESSION_JWT_ALG` (default `ES256`; `RS256`, `EdDSA`): the algorithm of new session JWT signing keys. */
  readonly sessionJwtAlg: SessionJwtAlg;
  /** `SESSION_JWT_TTL_SECONDS` (default 300, 30 to 3,600): a session JWT's longest life, never past its session's. */
  readonly sessionJwtTtlSeconds: number;
  /** Where `GET /v1/auth/verify-email` sends the browser after verifying; unset → a small HTML page. */
  readonly emailVerifiedRedirectUrl: string | undefined;
  /** The application's reset page; the reset email links to it with `?token=`. Unset → the email carries the token alone. */
  readonly passwordResetUrl: string | undefined;
  /** The application's page that accepts an organization invitation; the email links to it with `?token=`. Unset → the token alone. */
  readonly invitationAcceptUrl: string | undefined;
}

export interface EmailConfig {
  /** `smtp://` or `smtps://` URL; unset → each email is logged and written to `DATA_DIR/outbox/`. */
  readonly smtpUrl: string | undefined;
  /** The From header of every email. */
  readonly from: string;
  /** The service's public base address (no `/v1`), for links in emails. */
  readonly publicUrl: string;
}

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

export interface RateLimitConfig {
  /** Requests per second per secret key; 0 turns the limit off. */
  readonly keyPerSecond: number;
  readonly keyBurst: number;
  /** Requests per second per client IP on routes without a secret key; 0 turns the limit off. */
  readonly ipPerSecond: number;
  readonly ipBurst: number;
}

/** A guessable metrics token protects nothing. */
const METRICS_TOKEN_LENGTH_MIN = 16;

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'], 'development');
  const dataDir = resolve(env['DATA_DIR'] ?? './data');
  const keyPerSecond = integer(env, 'RATE_LIMIT_KEY_PER_SECOND', 1000, { min: 0 });
  const ipPerSecond = integer(env, 'RATE_LIMIT_IP_PER_SECOND', 100, { min: 0 });
  const certFile = env['TLS_CERT_FILE'];
  const keyFile = env['TLS_KEY_FILE'];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'TLS_CERT_FILE and TLS_KEY_FILE go together');
  }
  const bootstrapSecretKey = nonEmpty(env['SVC_SECRET_KEY']);
  if (bootstrapSecretKey !== undefined && !/^svc_sk_[0-9A-Za-z]{32,128}$/.test(bootstrapSecretKey)) {
    throw new ConfigError('SVC_SECRET_KEY', 'must be svc_sk_ followed by 32 to 128 letters or digits');
  }
  const webhookAllowPrivate = flag(env, 'WEBHOOK_ALLOW_PRIVATE');
  const port = integer(env, 'PORT', 8080, { min: 0, max: 65535 });
  const smtpUrl = nonEmpty(env['SMTP_URL']);
  if (smtpUrl !== undefined) checkedUrl('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  if (nodeEnv === 'production' && webhookAllowPrivate) {
    throw new ConfigError('WEBHOOK_ALLOW_PRIVATE', 'is a development setting and is refused when NODE_ENV=production');
  }
  const oauth = oauthConfig(env, nodeEnv);
  const secrets = secretsConfig(env, nodeEnv);
  if (nodeEnv === 'production' && smtpUrl === undefined) {
    throw new ConfigError(
      'SMTP_URL',
      'is required when NODE_ENV=production: without it, emails (with their verification and password reset tokens) are written to DATA_DIR/outbox/',
    );
  }
  const metricsToken = nonEmpty(env['METRICS_TOKEN']);
  if (metricsToken !== undefined && metricsToken.length < METRICS_TOKEN_LENGTH_MIN) {
    throw new ConfigError('METRICS_TOKEN', `must be at least ${METRICS_TOKEN_LENGTH_MIN} characters (e.g. \`openssl rand -hex 32\`)`);
  }

  const config: Config = {
    nodeEnv,
    host: env['HOST'] ?? '0.0.0.0',
    port,
    dataDir,
    database: databaseConfig(env, dataDir),
    redisUrl: nonEmpty(env['REDIS_URL']),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      nodeEnv === 'test' ? 'silent' : 'info',
    ),
    bootstrapSecretKey,
    rateLimit: {
      keyPerSecond,
      keyBurst: integer(env, 'RATE_LIMIT_KEY_BURST', keyPerSecond * 2, { min: 0 }),
      ipPerSecond,
      ipBurst: integer(env, 'RATE_LIMIT_IP_BURST', ipPerSecond * 2, { min: 0 }),
    },
    trustProxy: trustProxy(env['TRUST_PROXY']),
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    corsOrigins: (env['CORS_ORIGINS'] ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
    webhookAllowPrivate,
    webhookRetryScheduleSeconds: retrySchedule(env, 'WEBHOOK_RETRY_SCHEDULE', [0, 10, 60, 300, 1800]),
    // At least the attempt timeout (10 s) plus time to send after claiming and to record after.
    webhookLeaseSeconds: integer(env, 'WEBHOOK_LEASE_SECONDS', 60, { min: 15, max: 3600 }),
    webhookIdlePollMs: integer(env, 'WEBHOOK_IDLE_POLL_MS', 1000, { min: 100, max: 60_000 }),
    webhookDisableAfterSeconds: integer(env, 'WEBHOOK_DISABLE_AFTER_SECONDS', 432_000, { min: 60, max: 365 * 24 * 60 * 60 }),
    webhookWorkerId: workerId(env, 'WEBHOOK_WORKER_ID'),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, { min: 1, max: 3650 }),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, { min: 1, max: 36500 }),
    shutdownTimeoutMs: shutdownTimeoutMs(env),
    // At least a second: the deadline is checked in steps of a tenth of it (http/app.ts).
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000 }),
    metricsToken,
    dnsServers: dnsServers(env['DNS_SERVERS']),
    auth: {
      sessionTtlSeconds: duration(env, 'SESSION_TTL', 24 * 60 * 60),
      refreshTtlSeconds: duration(env, 'REFRESH_TTL', 30 * 24 * 60 * 60),
      // At most a minute: the window exists for a retry after a dropped response, and whoever holds
      // a copy of the token may use it as long as it lasts.
      refreshReuseGraceSeconds: integer(env, 'REFRESH_REUSE_GRACE_SECONDS', 0, { min: 0, max: 60 }),
      // At most a session's default lifetime: a longer window would make every session count as recent.
      reauthWindowSeconds: integer(env, 'REAUTH_WINDOW_SECONDS', 600, { min: 1, max: 24 * 60 * 60 }),
      sessionJwtAlg: sessionJwtAlg(env),
      // At least 30 s (clock skew between issuer and verifier eats a shorter life); at most an hour,
      // the bound a revoked session's JWTs outlive it by (docs/security.md).
      sessionJwtTtlSeconds: integer(env, 'SESSION_JWT_TTL_SECONDS', 300, { min: 30, max: SESSION_JWT_TTL_SECONDS_MAX }),
      emailVerifiedRedirectUrl: optionalUrl(env, 'EMAIL_VERIFIED_REDIRECT_URL'),
      passwordResetUrl: optionalUrl(env, 'PASSWORD_RESET_URL'),
      invitationAcceptUrl: optionalUrl(env, 'INVITATION_ACCEPT_URL'),
    },
    email: {
      smtpUrl,
      from: nonEmpty(env['EMAIL_FROM']) ?? 'svc <no-reply@localhost>',
      publicUrl: (optionalUrl(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    },
    oauth,
    secrets,
    tracing: tracingConfig(env),
  };
  return deepFreeze(config);
}

function tracingConfig(env: Env): TracingConfig | undefined {
  const endpoint = optionalUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === undefined) return undefined;
  return {
    endpoint: endpoint.replace(/\/+$/, ''),
    protocol: oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', ['http/protobuf', 'http/json'], 'http/protobuf'),
    serviceName: nonEmpty(env['OTEL_SERVICE_NAME']) ?? 'svc',
    scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, { min: 1, max: 60_000 }),
  };
}

/** Below Kubernetes' default grace of 30 s, so that the process exits by itself before it is killed. */
const SHUTDOWN_TIMEOUT_SECONDS_DEFAULT = 25;

/**
 * SHUTDOWN_TIMEOUT_SECONDS; the older SHUTDOWN_TIMEOUT_MS is still read when it alone is set, and
 * goes a release later (settings are removed as columns are: one release after their replacement).
 */
function shutdownTimeoutMs(env: Env): number {
  const seconds = nonEmpty(env['SHUTDOWN_TIMEOUT_SECONDS']);
  const milliseconds = nonEmpty(env['SHUTDOWN_TIMEOUT_MS']);
  if (seconds !== undefined && milliseconds !== undefined) {
    throw new ConfigError('SHUTDOWN_TIMEOUT_MS', 'is replaced by SHUTDOWN_TIMEOUT_SECONDS; set only SHUTDOWN_TIMEOUT_SECONDS');
  }
  if (milliseconds !== undefined) return integer(env, 'SHUTDOWN_TIMEOUT_MS', 0, { min: 0, max: 3_600_000 });
  return integer(env, 'SHUTDOWN_TIMEOUT_SECONDS', SHUTDOWN_TIMEOUT_SECONDS_DEFAULT, { min: 1, max: 3600 }) * 1000;
}

function databaseConfig(env: Env, dataDir: string): DatabaseConfig {
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

function oauthConfig(env: Env, nodeEnv: Config['nodeEnv']): OAuthConfig {
  const allowInsecureHttp = flag(env, 'OAUTH_ALLOW_INSECURE_HTTP');
  const allowPrivate = flag(env, 'OAUTH_ALLOW_PRIVATE');
  for (const [name, on] of [
    ['OAUTH_ALLOW_INSECURE_HTTP', allowInsecureHttp],
    ['OAUTH_ALLOW_PRIVATE', allowPrivate],
  ] as const) {
    if (on && nodeEnv === 'production') throw new ConfigError(name, 'is a development setting and is refused when NODE_ENV=production');
  }
  const protocols = allowInsecureHttp ? ['https:', 'http:'] : ['https:'];
  const endpoint = (name: string, fallback: string) => {
    const value = nonEmpty(env[name]);
    return value === undefined ? fallback : checkedUrl(name, value, protocols).replace(/\/+$/, '');
  };
  return {
    allowInsecureHttp,
    allowPrivate,
    endpoints: {
      googleIssuer: endpoint('OAUTH_GOOGLE_ISSUER', 'https://accounts.google.com'),
      appleIssuer: endpoint('OAUTH_APPLE_ISSUER', 'https://appleid.apple.com'),
      githubUrl: endpoint('OAUTH_GITHUB_URL', 'https://github.com'),
      githubApiUrl: endpoint('OAUTH_GITHUB_API_URL', 'https://api.github.com'),
    },
  };
}

/**
 * The sealing keyring: `SECRETS_ENCRYPTION_KEYS=id:key,id:key` (the first seals, all open) or
 * `SECRETS_ENCRYPTION_KEY=key` (a ring of one, id `default`); not both. Ids are 1 to 32 letters,
 * digits, `_` or `-`, each once. Required in production.
 */
function secretsConfig(env: Env, nodeEnv: Config['nodeEnv']): SecretsConfig {
  const list = nonEmpty(env['SECRETS_ENCRYPTION_KEYS']);
  const single = nonEmpty(env['SECRETS_ENCRYPTION_KEY']);
  if (list !== undefined && single !== undefined) {
    throw new ConfigError(
      'SECRETS_ENCRYPTION_KEYS',
      'and SECRETS_ENCRYPTION_KEY are both set; keep one (SECRETS_ENCRYPTION_KEY=K is SECRETS_ENCRYPTION_KEYS=default:K)',
    );
  }
  if (single !== undefined) {
    return { keys: [{ id: SINGLE_KEY_ID, keyHex: encryptionKey('SECRETS_ENCRYPTION_KEY', single).toString('hex') }] };
  }
  if (list === undefined) {
    if (nodeEnv === 'production') {
      throw new ConfigError(
        'SECRETS_ENCRYPTION_KEYS',
        'is required when NODE_ENV=production (or SECRETS_ENCRYPTION_KEY): id:key pairs, each key 32 random bytes in base64 (e.g. `k1:$(openssl rand -base64 32)`)',
      );
    }
    return { keys: undefined };
  }
  const keys: { id: string; keyHex: string }[] = [];
  for (const [index, pair] of list.split(',').entries()) {
    const separator = pair.indexOf(':');
    const id = separator === -1 ? '' : pair.slice(0, separator).trim();
    const name = `SECRETS_ENCRYPTION_KEYS (entry ${index + 1})`;
    if (separator === -1) throw new ConfigError(name, 'must be id:key, e.g. k1:<32 bytes in base64>');
    if (!KEY_ID_PATTERN.test(id)) throw new ConfigError(name, `the key id must be 1 to 32 letters, digits, "_" or "-", got "${id}"`);
    if (keys.some((key) => key.id === id)) throw new ConfigError(name, `the key id "${id}" appears twice`);
    keys.push({ id, keyHex: encryptionKey(`${name} "${id}"`, pair.slice(separator + 1).trim()).toString('hex') });
  }
  return { keys };
}

/** 32 bytes, written as 64 hex digits or as base64 (standard or URL-safe, padding optional). */
function encryptionKey(name: string, raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(
      name,
      'the key must be 32 bytes written as base64 or as 64 hex digits (e.g. the output of `openssl rand -base64 32`)',
    );
  }
  return key;
}

/** `DNS_SERVERS`: comma-separated `ip`, `ip:port` or `[ipv6]:port`; a port from 1 to 65535. */
function dnsServers(value: string | undefined): readonly string[] {
  const servers = (value ?? '')
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  for (const server of servers) {
    const match = /^\[([^\]]+)\]:(\d+)$/.exec(server) ?? /^([^:]+):(\d+)$/.exec(server);
    const address = match?.[1] ?? server;
    const port = match === null ? 53 : Number(match[2]);
    if (isIP(address) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ConfigError('DNS_SERVERS', `"${server}" is not an IP address, with an optional port (ip:port, [ipv6]:port)`);
    }
  }
  return servers;
}

/** `SESSION_JWT_ALG`, spelled as JOSE spells it (`oneOf` would lower-case it). */
function sessionJwtAlg(env: Env): SessionJwtAlg {
  const raw = nonEmpty(env['SESSION_JWT_ALG']);
  if (raw === undefined) return 'ES256';
  const alg = SESSION_JWT_ALGS.find((candidate) => candidate === raw);
  if (alg === undefined) throw new ConfigError('SESSION_JWT_ALG', `must be one of ${SESSION_JWT_ALGS.join(', ')}, got "${raw}"`);
  return alg;
}

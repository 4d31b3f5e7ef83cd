import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { type AuthConfig, authConfig } from './config-auth.js';
import { type DatabaseConfig, databaseConfig } from './config-database.js';
import { type OAuthConfig, oauthConfig } from './config-oauth.js';
import {
  checkedUrl,
  ConfigError,
  deepFreeze,
  type Env,
  flag,
  integer,
  type NodeEnv,
  nonEmpty,
  oneOf,
  optionalUrl,
  retrySchedule,
  trustProxy,
  workerId,
} from './config-parsing.js';
import { type SecretsConfig, secretsConfig } from './config-secrets.js';

export { ConfigError } from './config-parsing.js';
export { type AuthConfig, SESSION_JWT_ALGS, SESSION_JWT_TTL_SECONDS_MAX, type SessionJwtAlg } from './config-auth.js';
export type { DatabaseConfig } from './config-database.js';
export type { OAuthConfig, OAuthEndpoints } from './config-oauth.js';
export type { SecretsConfig } from './config-secrets.js';

/**
 * The environment, parsed and validated once at start into a frozen object. Every variable is
 * documented in docs/configuration.md; a wrong value stops the process with a message that names
 * the variable, rather than surfacing later as odd behaviour.
 */
export interface Config {
  readonly nodeEnv: NodeEnv;
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

export interface EmailConfig {
  /** `smtp://` or `smtps://` URL; unset → each email is logged and written to `DATA_DIR/outbox/`. */
  readonly smtpUrl: string | undefined;
  /** The From header of every email. */
  readonly from: string;
  /** The service's public base address (no `/v1`), for links in emails. */
  readonly publicUrl: string;
}

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
    auth: authConfig(env),
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

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('defaults to SQLite in ./data on port 8080 with the contract rate limits', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.database).toMatchObject({ dialect: 'sqlite', synchronous: 'full' });
    expect(config.database.dialect === 'sqlite' && config.database.file.endsWith('/data/svc.sqlite')).toBe(true);
    expect(config.rateLimit).toEqual({ keyPerSecond: 1000, keyBurst: 2000, ipPerSecond: 100, ipBurst: 200 });
    expect(Object.isFrozen(config) && Object.isFrozen(config.rateLimit)).toBe(true);
  });

  it('traces only with OTEL_EXPORTER_OTLP_ENDPOINT: http/protobuf and the service name svc unless told otherwise', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      protocol: 'http/protobuf',
      serviceName: 'svc',
      scheduleDelayMs: 5000,
    });
    const json = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'wallets-eu',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    }).tracing;
    expect(json).toEqual({ endpoint: 'https://collector.example', protocol: 'http/json', serviceName: 'wallets-eu', scheduleDelayMs: 200 });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('uses PostgreSQL when DATABASE_URL says so', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({
      dialect: 'postgres',
      url: 'postgres://u@h:5432/db',
      poolSize: 20,
      preparedStatements: true,
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db', DATABASE_POOL_SIZE: '5' }).database).toMatchObject({ poolSize: 5 });
  });

  it('turns PostgreSQL prepared statements off with DATABASE_PREPARED_STATEMENTS=false, and refuses other words', () => {
    const postgres = (value: string) => loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_PREPARED_STATEMENTS: value }).database;
    expect(postgres('false')).toMatchObject({ preparedStatements: false });
    expect(postgres('0')).toMatchObject({ preparedStatements: false });
    expect(postgres('true')).toMatchObject({ preparedStatements: true });
    expect(postgres('')).toMatchObject({ preparedStatements: true });
    expect(() => postgres('off')).toThrow(ConfigError);
    expect(() => postgres('off')).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('holds a claimed webhook delivery for 60 s unless WEBHOOK_LEASE_SECONDS says otherwise', () => {
    expect(loadConfig({}).webhookLeaseSeconds).toBe(60);
    expect(loadConfig({ WEBHOOK_LEASE_SECONDS: '15' }).webhookLeaseSeconds).toBe(15);
  });

  it('lets an idle delivery worker wait up to 1 s between passes unless WEBHOOK_IDLE_POLL_MS says otherwise', () => {
    expect(loadConfig({}).webhookIdlePollMs).toBe(1000);
    expect(loadConfig({ WEBHOOK_IDLE_POLL_MS: '100' }).webhookIdlePollMs).toBe(100);
  });

  it('turns a limit off with 0', () => {
    expect(loadConfig({ RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0' }).rateLimit).toMatchObject({
      keyPerSecond: 0,
      ipPerSecond: 0,
    });
  });

  // Without SMTP_URL, every email (verification and password reset tokens included) is
  // written to DATA_DIR/outbox/, which in production means credentials on disk.
  it('refuses NODE_ENV=production without SMTP_URL, and starts with it', () => {
    const production = { NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/^SMTP_URL: is required when NODE_ENV=production/);
    expect(() => loadConfig({ ...production, SMTP_URL: ' ' })).toThrow(/^SMTP_URL:/);
    expect(loadConfig({ ...production, SMTP_URL: 'smtps://mail.example.com' }).email.smtpUrl).toBe('smtps://mail.example.com');
    expect(loadConfig({ NODE_ENV: 'development' }).email.smtpUrl).toBeUndefined();
  });

  it('takes REFRESH_REUSE_GRACE_SECONDS (default 0: refresh tokens are single use) and METRICS_TOKEN (default none)', () => {
    expect(loadConfig({}).auth.refreshReuseGraceSeconds).toBe(0);
    expect(loadConfig({ REFRESH_REUSE_GRACE_SECONDS: '10' }).auth.refreshReuseGraceSeconds).toBe(10);
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).toBe('m'.repeat(32));
  });

  it('waits SHUTDOWN_TIMEOUT_SECONDS (default 25) on SIGTERM; still reads SHUTDOWN_TIMEOUT_MS alone, never both', () => {
    expect(loadConfig({}).shutdownTimeoutMs).toBe(25_000);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '5' }).shutdownTimeoutMs).toBe(5_000);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_MS: '1500' }).shutdownTimeoutMs).toBe(1_500);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '2.5' })).toThrow(/SHUTDOWN_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '5', SHUTDOWN_TIMEOUT_MS: '5000' })).toThrow(/set only SHUTDOWN_TIMEOUT_SECONDS/);
  });

  it('takes REQUEST_TIMEOUT_MS, 30 s by default', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(30_000);
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }).requestTimeoutMs).toBe(1000);
  });

  it('asks for a sign-in or reauthentication within REAUTH_WINDOW_SECONDS (default 600) before sensitive changes', () => {
    expect(loadConfig({}).auth.reauthWindowSeconds).toBe(600);
    expect(loadConfig({ REAUTH_WINDOW_SECONDS: '1' }).auth.reauthWindowSeconds).toBe(1);
  });

  it('signs session JWTs with SESSION_JWT_ALG (default ES256) for SESSION_JWT_TTL_SECONDS (default 300)', () => {
    expect(loadConfig({}).auth).toMatchObject({ sessionJwtAlg: 'ES256', sessionJwtTtlSeconds: 300 });
    expect(loadConfig({ SESSION_JWT_ALG: 'EdDSA', SESSION_JWT_TTL_SECONDS: '30' }).auth).toMatchObject({
      sessionJwtAlg: 'EdDSA',
      sessionJwtTtlSeconds: 30,
    });
    expect(loadConfig({ SESSION_JWT_ALG: 'RS256', SESSION_JWT_TTL_SECONDS: '3600' }).auth.sessionJwtAlg).toBe('RS256');
  });

  it("takes DNS_SERVERS: ip, ip:port or [ipv6]:port, comma-separated; default none (the system's resolvers)", () => {
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(loadConfig({ DNS_SERVERS: ' 127.0.0.1:5353, 9.9.9.9 ,[::1]:53,::1' }).dnsServers).toEqual([
      '127.0.0.1:5353',
      '9.9.9.9',
      '[::1]:53',
      '::1',
    ]);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SVC_SECRET_KEY: 'sk_test_123' }, 'SVC_SECRET_KEY'],
    [{ TLS_CERT_FILE: '/cert.pem' }, 'TLS_KEY_FILE'],
    [{ WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE'],
    [{ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: '1' }, 'WEBHOOK_ALLOW_PRIVATE'],
    // A lease shorter than the 10-s attempt timeout could expire while its attempt is in flight.
    [{ WEBHOOK_LEASE_SECONDS: '10' }, 'WEBHOOK_LEASE_SECONDS'],
    [{ WEBHOOK_IDLE_POLL_MS: '50' }, 'WEBHOOK_IDLE_POLL_MS'],
    [{ REFRESH_REUSE_GRACE_SECONDS: '61' }, 'REFRESH_REUSE_GRACE_SECONDS'],
    [{ REFRESH_REUSE_GRACE_SECONDS: '1.5' }, 'REFRESH_REUSE_GRACE_SECONDS'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ REQUEST_TIMEOUT_MS: '999' }, 'REQUEST_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: '300001' }, 'REQUEST_TIMEOUT_MS'],
    [{ REAUTH_WINDOW_SECONDS: '0' }, 'REAUTH_WINDOW_SECONDS'],
    [{ REAUTH_WINDOW_SECONDS: '600s' }, 'REAUTH_WINDOW_SECONDS'],
    [{ SESSION_JWT_ALG: 'HS256' }, 'SESSION_JWT_ALG'],
    [{ SESSION_JWT_ALG: 'es256' }, 'SESSION_JWT_ALG'],
    [{ SESSION_JWT_TTL_SECONDS: '29' }, 'SESSION_JWT_TTL_SECONDS'],
    [{ SESSION_JWT_TTL_SECONDS: '3601' }, 'SESSION_JWT_TTL_SECONDS'],
    [{ DNS_SERVERS: 'dns.example' }, 'DNS_SERVERS'],
    [{ DNS_SERVERS: '127.0.0.1:0' }, 'DNS_SERVERS'],
    [{ DNS_SERVERS: '127.0.0.1:70000' }, 'DNS_SERVERS'],
    [{ DNS_SERVERS: '1.1.1.1,::1:53x' }, 'DNS_SERVERS'],
  ])('refuses %o, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}:`));
  });
});

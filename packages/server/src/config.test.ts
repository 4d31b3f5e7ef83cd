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

  it('uses PostgreSQL when DATABASE_URL says so', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({
      dialect: 'postgres',
      url: 'postgres://u@h:5432/db',
      poolSize: 20,
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db', DATABASE_POOL_SIZE: '5' }).database).toMatchObject({ poolSize: 5 });
  });

  it('holds a claimed webhook delivery for 60 s unless WEBHOOK_LEASE_SECONDS says otherwise', () => {
    expect(loadConfig({}).webhookLeaseSeconds).toBe(60);
    expect(loadConfig({ WEBHOOK_LEASE_SECONDS: '15' }).webhookLeaseSeconds).toBe(15);
  });

  it('turns a limit off with 0', () => {
    expect(loadConfig({ RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0' }).rateLimit).toMatchObject({
      keyPerSecond: 0,
      ipPerSecond: 0,
    });
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
  ])('refuses %o, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}:`));
  });
});

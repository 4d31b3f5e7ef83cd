import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { needsHostSelection, parsePostgresUrl } from './postgres-url.js';

describe('parsePostgresUrl', () => {
  it('reads every host of a libpq multi-host URL, in order, with its port', () => {
    const target = parsePostgresUrl('postgres://svc:s3cret@db1:5432,db2:5433/app?target_session_attrs=read-write&sslmode=disable');
    expect(target.hosts.map(({ host, port }) => [host, port])).toEqual([
      ['db1', 5432],
      ['db2', 5433],
    ]);
    expect(target.targetSessionAttrs).toBe('read-write');
    // node-postgres gets one host per URL, with everything else kept and target_session_attrs left out.
    expect(target.hosts.map((one) => one.url)).toEqual([
      'postgres://svc:s3cret@db1:5432/app?sslmode=disable',
      'postgres://svc:s3cret@db2:5433/app?sslmode=disable',
    ]);
    expect(needsHostSelection(target)).toBe(true);
  });

  it('gives a host without a port 5432, and reads IPv6 addresses in brackets', () => {
    const target = parsePostgresUrl('postgresql://u@[::1]:6543,[fd00::2],primary.internal/db');
    expect(target.hosts.map(({ host, port }) => [host, port])).toEqual([
      ['::1', 6543],
      ['fd00::2', 5432],
      ['primary.internal', 5432],
    ]);
    expect(target.hosts[1]?.url).toBe('postgresql://u@[fd00::2]:5432/db');
    expect(target.targetSessionAttrs).toBe('any');
  });

  it('accepts the target_session_attrs that take writes: any, read-write, primary', () => {
    for (const value of ['any', 'read-write', 'primary'] as const) {
      expect(parsePostgresUrl(`postgres://h1,h2/db?target_session_attrs=${value}`).targetSessionAttrs).toBe(value);
    }
  });

  it('refuses the target_session_attrs that pick a host that does not take writes, and unknown ones', () => {
    for (const value of ['read-only', 'standby', 'prefer-standby']) {
      expect(() => parsePostgresUrl(`postgres://h1,h2/db?target_session_attrs=${value}`)).toThrow(/does not take writes/);
    }
    expect(() => parsePostgresUrl('postgres://h1,h2/db?target_session_attrs=master')).toThrow(
      /target_session_attrs must be one of any, read-write, primary, not master/,
    );
  });

  it('refuses bad ports, empty hosts in a list, an unclosed IPv6 bracket and hosts named twice', () => {
    expect(() => parsePostgresUrl('postgres://h1:0,h2/db')).toThrow(/port .* 1 to 65535: 0/);
    expect(() => parsePostgresUrl('postgres://h1:70000/db')).toThrow(/port/);
    expect(() => parsePostgresUrl('postgres://h1:54x2,h2/db')).toThrow(/port/);
    expect(() => parsePostgresUrl('postgres://h1,,h2/db')).toThrow(/empty host/);
    expect(() => parsePostgresUrl('postgres://[::1,h2/db')).toThrow(/closing bracket/);
    expect(() => parsePostgresUrl('postgres://h1,h2/db?host=h3')).toThrow(/name them only before the path/);
  });

  it('reads connect_timeout in seconds, 5 by default, as how long one host may take', () => {
    expect(parsePostgresUrl('postgres://h1,h2/db').connectTimeoutMs).toBe(5000);
    expect(parsePostgresUrl('postgres://h1,h2/db?connect_timeout=2').connectTimeoutMs).toBe(2000);
    expect(() => parsePostgresUrl('postgres://h1,h2/db?connect_timeout=soon')).toThrow(/connect_timeout/);
  });

  it('leaves a single host without target_session_attrs to node-postgres as it is', () => {
    expect(needsHostSelection(parsePostgresUrl('postgres://u@h:5432/db'))).toBe(false);
    expect(needsHostSelection(parsePostgresUrl('postgres://u@h/db?target_session_attrs=any'))).toBe(false);
    expect(needsHostSelection(parsePostgresUrl('postgres://u@h/db?target_session_attrs=primary'))).toBe(true);
  });
});

describe('DATABASE_URL with several hosts', () => {
  it('is parsed at start, the single-host form unchanged', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({
      dialect: 'postgres',
      url: 'postgres://u@h:5432/db',
      poolSize: 20,
      preparedStatements: true,
    });
    const database = loadConfig({ DATABASE_URL: 'postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write' }).database;
    expect(database.dialect === 'postgres' && database.target?.hosts.map((one) => `${one.host}:${one.port}`)).toEqual([
      'h1:5432',
      'h2:5433',
    ]);
  });

  it('stops the process with a message that names DATABASE_URL and never repeats the password', () => {
    const load = () => loadConfig({ DATABASE_URL: 'postgres://u:hunter2@h1,h2/db?target_session_attrs=standby' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/DATABASE_URL.*target_session_attrs=standby picks a host that does not take writes/);
    expect(load).not.toThrow(/hunter2/);
  });
});

/**
 * The pieces config.ts and its sections (config-*.ts) build the configuration from: `ConfigError`,
 * which names the variable at fault, and the parsers of one variable each (whole numbers,
 * durations, flags, URLs, lists), plus the deep freeze of the result. What each variable means is
 * theirs (docs/configuration.md).
 */

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** `NODE_ENV`: the development settings are refused in production. */
export type NodeEnv = 'development' | 'production' | 'test';

const DURATION_UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds, written as a whole number of seconds or with a unit: `900`, `15m`, `24h`, `30d`. */
export function duration(env: Env, name: string, fallbackSeconds: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallbackSeconds;
  const match = /^(\d+)([smhd]?)$/.exec(raw);
  const seconds = match === null ? 0 : Number(match[1]) * (DURATION_UNIT_SECONDS[match[2] || 's'] ?? 0);
  if (match === null || seconds < 1 || !Number.isSafeInteger(seconds)) {
    throw new ConfigError(name, `must be a positive duration such as 3600, 15m, 24h or 30d, got "${raw}"`);
  }
  return seconds;
}

export function checkedUrl(name: string, value: string, protocols: readonly string[] = ['http:', 'https:']): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${value}"`);
  }
  if (!protocols.includes(url.protocol))
    throw new ConfigError(name, `must start with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`);
  return value;
}

export function optionalUrl(env: Env, name: string): string | undefined {
  const value = nonEmpty(env[name]);
  return value === undefined ? undefined : checkedUrl(name, value);
}

/** A comma-separated list of 1 to 20 delays in whole seconds, each at most one day. */
export function retrySchedule(env: Env, name: string, fallback: readonly number[]): readonly number[] {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20 || parts.some((part) => !/^\d+$/.test(part) || Number(part) > 86_400)) {
    throw new ConfigError(name, `must be 1 to 20 comma-separated whole numbers of seconds, each at most 86400, got "${raw}"`);
  }
  return parts.map(Number);
}

export function trustProxy(value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  // A comma-separated list of addresses or CIDR ranges of trusted proxies, as Fastify takes it.
  return value;
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `1`/`true` or `0`/`false`; unset or empty is `fallback`. */
export function flag(env: Env, name: string, fallback = false): boolean {
  const value = nonEmpty(env[name]);
  if (value === undefined) return fallback;
  if (value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new ConfigError(name, `must be 1, 0, true or false, got "${value}"`);
}

export function integer(env: Env, name: string, fallback: number, bounds: { min?: number; max?: number }): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if ((bounds.min !== undefined && value < bounds.min) || (bounds.max !== undefined && value > bounds.max)) {
    throw new ConfigError(name, `must be between ${bounds.min ?? '-∞'} and ${bounds.max ?? '∞'}, got ${value}`);
  }
  return value;
}

export function workerId(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name]);
  if (raw !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(raw)) {
    throw new ConfigError(name, `must be 1 to 64 letters, digits, "-" or "_", got "${raw}"`);
  }
  return raw;
}

export function oneOf<const T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = raw.toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return value as T;
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

import { ApiError } from './errors.js';

/** The one source of "now", so tests can move time without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the contract's only time format. */
export function isoTime(date: Date): string {
  return date.toISOString();
}

export function addMilliseconds(date: Date, milliseconds: number): Date {
  return new Date(date.getTime() + milliseconds);
}

/**
 * A time a client sent (any ISO 8601 form), in milliseconds since the epoch; 400
 * `parameter_invalid` naming `param` when it is not one. `isoTime(new Date(ms))` stores it.
 */
export function parseTimeParam(value: string, param: string): number {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new ApiError('parameter_invalid', `${param} must be an ISO 8601 time.`, { param });
  return time;
}

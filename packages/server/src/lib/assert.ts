/**
 * Invariant checks. A failed assertion is a bug in the service, never a client error: it
 * surfaces as 500 `internal_error` and is logged with the request id.
 */
export class AssertionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssertionError';
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

export function assertNever(value: never, message = 'unexpected value'): never {
  throw new AssertionError(`${message}: ${String(value)}`);
}

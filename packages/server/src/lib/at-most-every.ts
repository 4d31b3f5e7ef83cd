/** One warning per interval says a dependency is down as well as one per request would, without flooding the log. */
export const OUTAGE_WARNING_INTERVAL_MS = 10_000;

/** Calls `action` at most once per `intervalMs`; calls in between are dropped. */
export function atMostEvery<T>(intervalMs: number, action: (value: T) => void): (value: T) => void {
  let lastMs = -Infinity;
  return (value) => {
    const nowMs = Date.now();
    if (nowMs - lastMs < intervalMs) return;
    lastMs = nowMs;
    action(value);
  };
}

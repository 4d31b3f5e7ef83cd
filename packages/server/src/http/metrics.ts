import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface HttpMetrics {
  readonly registry: Registry;
  observe(labels: { method: string; route: string; status: number }, durationSeconds: number): void;
}

/** A registry with the process's own metrics (CPU, memory, event loop); one per service, served at `GET /metrics`. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Request counts and latency by route and status, in `registry` (a new one with the process metrics by default). */
export function createHttpMetrics(registry: Registry = createMetricsRegistry()): HttpMetrics {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // prom-client hashes the label values on every call; the set of (method, route, status) is
  // small and fixed by the routes, so each combination's children are looked up once.
  const children = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();
  return {
    registry,
    observe(labels, durationSeconds) {
      const name = `${labels.method} ${labels.route} ${labels.status}`;
      let child = children.get(name);
      if (child === undefined) {
        const values = { method: labels.method, route: labels.route, status: String(labels.status) };
        child = { requests: requests.labels(values), duration: duration.labels(values) };
        children.set(name, child);
      }
      child.requests.inc();
      child.duration.observe(durationSeconds);
    },
  };
}

import type { RouteOptions } from 'fastify';

/**
 * Which methods each path of the route table takes, so that a request the router did not match can
 * be told apart: a known path with another method is 405 `method_not_allowed` with `Allow`, an
 * unknown path 404 `route_not_found` (RFC 9110 section 15.5.6). Filled from the `onRoute` hook as
 * routes are registered, and asked only on the not-found path, never for a matched request.
 */
export interface RouteMethods {
  /** Records a route as Fastify registers it (its HEAD twin of a GET route arrives as a route of its own). */
  add(route: Pick<RouteOptions, 'method' | 'url'>): void;
  /** The methods the path takes, sorted, or undefined when no route has the path. */
  allowedFor(path: string): readonly string[] | undefined;
}

export function routeMethods(): RouteMethods {
  const byPattern = new Map<string, { matcher: RegExp; methods: Set<string> }>();
  return {
    add(route) {
      let entry = byPattern.get(route.url);
      if (entry === undefined) {
        entry = { matcher: pathMatcher(route.url), methods: new Set() };
        byPattern.set(route.url, entry);
      }
      for (const method of Array.isArray(route.method) ? route.method : [route.method]) entry.methods.add(method.toUpperCase());
    },
    allowedFor(path) {
      const allowed = new Set<string>();
      for (const { matcher, methods } of byPattern.values()) {
        if (matcher.test(path)) for (const method of methods) allowed.add(method);
      }
      return allowed.size === 0 ? undefined : [...allowed].sort();
    },
  };
}

/**
 * The router's pattern as a regular expression over the raw path: `:name` is one non-empty
 * segment, a `*` the rest of the path. The routes here use no regular-expression parameters and
 * no two parameters in one segment, so this is the router's own reading of them.
 */
function pathMatcher(pattern: string): RegExp {
  const source = pattern
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

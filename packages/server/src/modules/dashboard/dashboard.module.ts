import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../lib/routes.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import type { Clock } from '../../lib/clock.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { DashboardService } from './dashboard.service.js';
import { type DashboardFiles, loadDashboardFiles } from './dashboard.static.js';

export interface Dashboard {
  /** Also the credential guard's `DashboardAuthenticator`. */
  readonly service: DashboardService;
  readonly routes: readonly RouteModule[];
  readonly jobs: readonly PeriodicJob[];
}

export interface DashboardDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly projects: ProjectsService;
  readonly rateLimiter: RateLimiter;
}

const CLEANUP_BATCH_SIZE = 1000;

/** The loopback names a browser treats as this machine, as a URL's `hostname` writes them. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether the dashboard cookie is `Secure`: always, unless the service is plainly a local one — no
 * TLS of its own, not production, and `PUBLIC_URL` (default `http://localhost:<PORT>`) an `http://`
 * address on a loopback name. Behind a TLS-terminating proxy the service itself has no TLS, so the
 * public address is what tells (deciding by TLS and NODE_ENV alone would send the cookie in clear
 * whenever a proxy terminates TLS outside production).
 */
export function dashboardCookieSecure(config: Pick<Config, 'nodeEnv' | 'tls' | 'email'>): boolean {
  if (config.nodeEnv === 'production' || config.tls !== undefined) return true;
  const publicUrl = new URL(config.email.publicUrl);
  return !(publicUrl.protocol === 'http:' && LOOPBACK_HOSTS.has(publicUrl.hostname));
}

/** The operator dashboard: its cookie sessions, the built page, and the job that forgets old sessions. */
export function createDashboard(deps: DashboardDependencies, options: { files?: DashboardFiles } = {}): Dashboard {
  const service = new DashboardService(deps);
  const files = options.files ?? loadDashboardFiles();
  const secureCookie = dashboardCookieSecure(deps.config);
  return {
    service,
    routes: [dashboardRoutes({ dashboard: service, files, secureCookie })],
    jobs: [
      {
        name: 'dashboard-sessions-cleanup',
        intervalMs: 60 * 60 * 1000,
        async run() {
          while ((await service.deleteExpired(CLEANUP_BATCH_SIZE)) === CLEANUP_BATCH_SIZE);
        },
      },
    ],
  };
}

import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../http/app.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import type { Clock } from '../../shared/clock.js';
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

/** The operator dashboard: its cookie sessions, the built page, and the job that forgets old sessions. */
export function createDashboard(deps: DashboardDependencies, options: { files?: DashboardFiles } = {}): Dashboard {
  const service = new DashboardService(deps);
  const files = options.files ?? loadDashboardFiles();
  const secureCookie = deps.config.nodeEnv === 'production' || deps.config.tls !== undefined;
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

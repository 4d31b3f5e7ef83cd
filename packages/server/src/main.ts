import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { type Db, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { buildApp, type RouteModule } from './http/app.js';
import { createLogger } from './http/logger.js';
import type { SessionAuthenticator } from './http/principal.js';
import type { RateLimiter } from './http/rate-limit.js';
import { MemoryRateLimiter } from './http/rate-limit.memory.js';
import { RedisRateLimiter } from './http/rate-limit.redis.js';
import { idempotencyCleanupJob } from './jobs/idempotency-cleanup.job.js';
import { type JobScheduler, type PeriodicJob, startJobs } from './jobs/scheduler.js';
import { projectsRoutes } from './modules/projects/projects.routes.js';
import { ProjectsService } from './modules/projects/projects.service.js';
import { type Clock, systemClock } from './shared/clock.js';
import { ApiError } from './shared/errors.js';

export interface Service {
  readonly config: Config;
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly logger: Logger;
  readonly projects: ProjectsService;
  /** The periodic jobs that `serve` and `worker` run. */
  readonly jobs: readonly PeriodicJob[];
  /** Closes the HTTP server (in-flight requests finish), the rate limiter and the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Extra routes, for tests that need a route of their own. */
  readonly routeModules?: readonly RouteModule[];
}

/** Until the sessions module exists, no session token is valid. */
const noSessions: SessionAuthenticator = {
  authenticate: () => Promise.reject(new ApiError('session_invalid', 'The session token is not valid.')),
};

/** The composition root: config → database → modules → HTTP app. Nothing here listens yet. */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const db = openDatabase(config.database);
  let rateLimiter: RateLimiter | undefined;
  try {
    await migrateToLatest(db);
    const projects = new ProjectsService({ db, clock });
    if (config.bootstrapSecretKey !== undefined) {
      const project = await projects.ensureBootstrapProject(config.bootstrapSecretKey);
      if (project !== undefined) logger.info({ project_id: project.id }, 'created the default project from SVC_SECRET_KEY');
    }
    rateLimiter =
      config.redisUrl === undefined
        ? new MemoryRateLimiter()
        : new RedisRateLimiter({
            url: config.redisUrl,
            onError: (error) => logger.warn({ err: error }, 'rate limiter: Redis did not answer; request let through'),
          });
    const limiter = rateLimiter;
    const app = await buildApp({ config, db, clock, logger, projects, rateLimiter: limiter, sessions: noSessions }, [
      projectsRoutes(projects),
      ...(options.routeModules ?? []),
    ]);
    const jobs = [idempotencyCleanupJob(db, clock)];
    return {
      config,
      app,
      db,
      logger,
      projects,
      jobs,
      async close() {
        await app.close();
        await limiter.close();
        await db.destroy();
      },
    };
  } catch (error) {
    await rateLimiter?.close();
    await db.destroy();
    throw error;
  }
}

export interface RunningService {
  readonly service: Service;
  readonly address: string;
  readonly scheduler: JobScheduler;
  /** Graceful stop: no new connections, in-flight requests finish, jobs stop, database closes. */
  stop(): Promise<void>;
}

export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const service = await createService(config, options);
  const address = await service.app.listen({ host: config.host, port: config.port });
  const scheduler = startJobs(service.jobs, service.logger);
  service.logger.info({ address, dialect: service.db.dialect }, 'listening');
  return {
    service,
    address,
    scheduler,
    async stop() {
      await scheduler.stop();
      await service.close();
    },
  };
}

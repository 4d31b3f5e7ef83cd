import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import { type Db, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { buildApp } from './http/app.js';
import { browserAccess } from './http/cors.js';
import { type RouteModule } from './lib/routes.js';
import { createLogger } from './http/logger.js';
import { createMetricsRegistry } from './http/metrics.js';
import { createLimitStores, type LimitStores } from './http/limit-stores.js';
import { idempotencyCleanupJob } from './jobs/idempotency-cleanup.job.js';
import { type JobScheduler, type PeriodicJob, startJobs } from './jobs/scheduler.js';
import { auditRetentionJob, auditSealJob } from './modules/audit/audit.jobs.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { AuditService } from './modules/audit/audit.service.js';
import { type Auth, createAuth } from './modules/auth/auth.module.js';
import { createDashboard, type Dashboard } from './modules/dashboard/dashboard.module.js';
import { createOAuth, type OAuth, type OAuthOptions } from './modules/oauth/oauth.module.js';
import { removeSecondFactorsOfClaimedUser } from './modules/mfa/mfa.service.js';
import { createPasskeys, type Passkeys, removePasskeysOfClaimedUser } from './modules/passkeys/passkeys.module.js';
import { createOrganizations, organizationsAuthHooks } from './modules/organizations/organizations.module.js';
import { projectsRoutes } from './modules/projects/projects.routes.js';
import { createSso, type Sso, ssoDomainRemovalStep } from './modules/sso/sso.module.js';
import { ProjectsService } from './modules/projects/projects.service.js';
import { statsFoldJob } from './modules/stats/stats.fold.js';
import { statsRoutes } from './modules/stats/stats.routes.js';
import { StatsService } from './modules/stats/stats.service.js';
import { walletBalanceRoutes } from './modules/users/wallet-balance.routes.js';
import { ledgerAuditSource } from './modules/ledger/ledger.audit.js';
import { LedgerService } from './modules/ledger/ledger.service.js';
import { walletsRoutes } from './modules/wallets/wallets.routes.js';
import { holdsRoutes } from './modules/wallets/holds.routes.js';
import { HoldsService, ledgerExpiryJob } from './modules/wallets/holds.service.js';
import { recurringGrantsRoutes } from './modules/wallets/recurring-grants.routes.js';
import { RecurringGrantsService, recurringGrantsJob } from './modules/wallets/recurring-grants.service.js';
import { WalletsService } from './modules/wallets/wallets.service.js';
import { createWebhooks, type Webhooks, type WebhooksOptions } from './modules/webhooks/webhooks.module.js';
import { type Clock, systemClock } from './lib/clock.js';
import { type SecretBox, secretBoxFromConfig } from './lib/secret-box.js';
import { startTracing } from './lib/tracing.js';
import { sealPlaintextSecrets } from './security/plaintext-sealing.js';

export interface Service {
  readonly config: Config;
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly logger: Logger;
  /**
   * The keyring that seals secrets at rest (docs/adr/0015-secrets-at-rest.md), built once here and
   * given to every module that seals: OAuth, SSO, webhooks, the idempotency store.
   */
  readonly secrets: SecretBox;
  /** What `GET /metrics` serves: HTTP, webhook delivery and process metrics. */
  readonly metricsRegistry: Registry;
  readonly projects: ProjectsService;
  readonly wallets: WalletsService;
  readonly ledger: LedgerService;
  /** Users, roles, sessions, email and password authentication, and the email outbox job. */
  readonly auth: Auth;
  /** Webhook endpoints, the event log and the delivery worker (started by `startService`). */
  readonly webhooks: Webhooks;
  /** The audit log: recording, reading, sealing and verifying its hash chain. */
  readonly audit: AuditService;
  /** Social and OpenID Connect sign-in: provider configuration, start and callback. */
  readonly oauth: OAuth;
  /** Enterprise SSO: organizations' OIDC and SAML connections and their sign-ins. */
  readonly sso: Sso;
  /** Passkeys (WebAuthn): registration, listing, removal and sign-in. */
  readonly passkeys: Passkeys;
  /** The operator dashboard at /dashboard: its cookie sessions and the built page. */
  readonly dashboard: Dashboard;
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
  /** Test seams of the webhooks module: DNS resolver, request timeout, worker limits. */
  readonly webhooks?: WebhooksOptions;
  /** Test seam of the OAuth and SSO modules: the CA that signs the test providers' certificates. */
  readonly oauth?: OAuthOptions;
  /** False writes no audit entries: the benchmark's baseline only (bench/scenarios/audit.js), never for users. */
  readonly auditRecording?: boolean;
}

/** The composition root: config → database → modules → HTTP app. Nothing here listens yet. */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const secrets = secretBoxFromConfig({ keys: config.secrets.keys, dataDir: config.dataDir });
  // Before anything that traces: with OTEL_EXPORTER_OTLP_ENDPOINT unset, no tracing code is loaded.
  const tracing = config.tracing === undefined ? undefined : await startTracing(config.tracing, logger);
  const db = openDatabase(config.database);
  let limitStores: LimitStores | undefined;
  let webhooks: Webhooks | undefined;
  let auth: Auth | undefined;
  let oauth: OAuth | undefined;
  try {
    await migrateToLatest(db);
    // Before anything is served or delivered: what an older version stored in clear gets sealed.
    const sealed = await sealPlaintextSecrets(db, secrets, { everyRow: false });
    if (sealed.webhook_endpoints + sealed.idempotency_keys > 0) logger.info({ sealed }, 'sealed secrets an older version stored in clear');
    const auditLedger = ledgerAuditSource(db);
    const audit = new AuditService({ db, clock, ledger: auditLedger, recording: options.auditRecording ?? true });
    const projects = new ProjectsService({ db, clock, audit });
    if (config.bootstrapSecretKey !== undefined) {
      const project = await projects.ensureBootstrapProject(config.bootstrapSecretKey);
      if (project !== undefined) logger.info({ project_id: project.id }, 'created the default project from SVC_SECRET_KEY');
    }
    const ledger = new LedgerService({ db, clock, audit });
    const metricsRegistry = createMetricsRegistry();
    webhooks = createWebhooks({ db, config, clock, logger, metricsRegistry, audit, secrets }, options.webhooks);
    const webhooksModule = webhooks;
    limitStores = createLimitStores({ redisUrl: config.redisUrl, clock, logger, metricsRegistry });
    const { rateLimiter: limiter, loginThrottle } = limitStores;
    const limits = limitStores;
    const organizationDeps = { db, config, clock, audit, projects };
    auth = createAuth({
      db,
      config,
      clock,
      logger,
      projects,
      rateLimiter: limiter,
      loginThrottle,
      browser: browserAccess(config.corsOrigins),
      audit,
      secrets,
      ...organizationsAuthHooks(organizationDeps),
      userClaimSteps: [removeSecondFactorsOfClaimedUser(), removePasskeysOfClaimedUser({ audit })],
    });
    const authModule = auth;
    const organizations = createOrganizations({ ...organizationDeps, auth: authModule, domainRemovalSteps: [ssoDomainRemovalStep()] });
    oauth = createOAuth({ db, config, clock, audit, auth: authModule, secrets }, options.oauth);
    const oauthModule = oauth;
    const ssoModule = createSso({
      db,
      config,
      clock,
      logger,
      audit,
      auth: authModule,
      organizations: organizations.service,
      oauth: oauthModule,
    });
    const passkeys = createPasskeys({ db, config, clock, audit, projects, auth: authModule, rateLimiter: limiter });
    // POST /wallets checks that `user_id` is a user of the project through the users module.
    const wallets = new WalletsService({ db, clock, users: authModule.users, audit });
    const dashboard = createDashboard({ db, config, clock, projects, rateLimiter: limiter });
    const app = await buildApp(
      {
        config,
        db,
        clock,
        logger,
        projects,
        rateLimiter: limiter,
        sessions: authModule.sessions,
        metricsRegistry,
        dashboard: dashboard.service,
        secrets,
      },
      [
        projectsRoutes(projects),
        walletsRoutes(wallets, ledger),
        holdsRoutes(new HoldsService({ db, clock }), ledger),
        recurringGrantsRoutes(new RecurringGrantsService({ db, clock, audit })),
        ...authModule.routes,
        ...oauthModule.routes,
        ...organizations.routes,
        ...ssoModule.routes,
        ...passkeys.routes,
        walletBalanceRoutes({ wallets, browser: authModule.browser }),
        ...webhooks.routes,
        auditRoutes(audit),
        statsRoutes(new StatsService({ db, clock })),
        ...dashboard.routes,
        ...(options.routeModules ?? []),
      ],
    );
    const jobs = [
      idempotencyCleanupJob(db, clock),
      ledgerExpiryJob({ db, clock, ledger }),
      recurringGrantsJob({ db, clock, ledger }),
      ...webhooks.jobs,
      ...authModule.jobs,
      ...oauthModule.jobs,
      ...ssoModule.jobs,
      ...passkeys.jobs,
      auditSealJob(db, clock, auditLedger),
      statsFoldJob(db, clock),
      auditRetentionJob({ db, clock, logger, retentionDays: config.auditRetentionDays, ledger: auditLedger }),
      ...dashboard.jobs,
    ];
    return {
      config,
      app,
      db,
      logger,
      secrets,
      metricsRegistry,
      projects,
      wallets,
      ledger,
      webhooks,
      audit,
      auth: authModule,
      oauth: oauthModule,
      sso: ssoModule,
      passkeys,
      dashboard,
      jobs,
      async close() {
        await app.close();
        await webhooksModule.close();
        await authModule.close();
        await oauthModule.close();
        await limits.close();
        // Refusals recorded after their responses are written before the database closes.
        await audit.settled().catch(() => undefined);
        await db.destroy();
        // Last: the spans of everything above are sent before the process goes.
        await tracing?.stop();
      },
    };
  } catch (error) {
    await webhooks?.close();
    await auth?.close();
    await oauth?.close();
    await limitStores?.close();
    await db.destroy();
    await tracing?.stop();
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
  service.webhooks.worker.start();
  service.logger.info({ address, dialect: service.db.dialect }, 'listening');
  return {
    service,
    address,
    scheduler,
    async stop() {
      // Side by side and at once: the server stops listening while requests in flight finish, and
      // the delivery worker hands back the leases of attempts it has not sent, so that another
      // worker takes them now rather than when they expire.
      await Promise.all([service.app.close(), service.webhooks.worker.stop(), scheduler.stop()]);
      await service.close();
    },
  };
}

export interface RunningWorker {
  readonly service: Service;
  /** Graceful stop: jobs and the delivery worker stop, connections and the database close. */
  stop(): Promise<void>;
}

/**
 * `svc worker`: the same composition as `serve` (so the two run the same background jobs and
 * cannot drift apart), without listening for HTTP.
 */
export async function startWorker(config: Config, options: ServiceOptions = {}): Promise<RunningWorker> {
  const service = await createService(config, options);
  const scheduler = startJobs(service.jobs, service.logger);
  service.webhooks.worker.start();
  service.logger.info({ dialect: service.db.dialect }, 'worker running');
  return {
    service,
    async stop() {
      // The leases of attempts not yet sent go back at once, whatever the jobs are doing.
      await Promise.all([service.webhooks.worker.stop(), scheduler.stop()]);
      await service.close();
    },
  };
}

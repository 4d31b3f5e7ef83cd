import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { BrowserAccess, RecentAuthenticationGuard, RouteModule } from '../../lib/routes.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { createEmailTransport, type EmailComposer, emailOutboxJob, type EmailTransport } from '../email/email.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { sealedSuccessorsCleanupJob, SessionJwts, SessionsService, SigningKeys } from '../sessions/sessions.service.js';
import { sessionsRoutes } from '../sessions/sessions.routes.js';
import { RolesService } from '../users/roles.service.js';
import { usersRoutes } from '../users/users.routes.js';
import { securityNoticeComposers, type UserClaimStep, type UserDeletionStep, UsersService } from '../users/users.service.js';
import { EmailCodesService } from '../mfa/email-codes.service.js';
import { mfaRoutes } from '../mfa/mfa.routes.js';
import { emailCodeComposers, mfaCleanupJob, MfaService, SignInGate } from '../mfa/mfa.service.js';
import { authEmailComposers } from './auth.emails.js';
import { authRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';
import type { LoginThrottle } from '../../lib/login-throttle.js';
import { Reauthentication } from './reauthentication.js';

export interface AuthDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly projects: ProjectsService;
  readonly audit: AuditService;
  /** Composers of other modules' emails (organization invitations), sent by the same outbox job. */
  readonly emailComposers?: Readonly<Record<string, EmailComposer>>;
  /** Other modules' work in the transaction that deletes a user (organization memberships). */
  readonly userDeletionSteps?: readonly UserDeletionStep[];
  /** Other modules' work in the transaction where a sign-in claims an unverified account (passkeys). */
  readonly userClaimSteps?: readonly UserClaimStep[];
  /** Seals secrets at rest (the refresh grace window's successor tokens); the service's one keyring, built in main.ts. */
  readonly secrets: SecretBox;
}

/** Users, roles, sessions and email and password authentication, with their routes and the email job. */
export interface Auth {
  readonly users: UsersService;
  readonly roles: RolesService;
  /** Also the credential guard's SessionAuthenticator. */
  readonly sessions: SessionsService;
  readonly service: AuthService;
  /** Log in's failure throttle (memory or Redis); passkey sign-in counts its failures in it too. */
  readonly loginThrottle: LoginThrottle;
  /** Where every first factor (password, OAuth, SSO, emailed code, passkey) turns into a session or an MFA challenge. */
  readonly gate: SignInGate;
  /** Users' authenticator apps and recovery codes. */
  readonly mfa: MfaService;
  /** Browser access (CORS) of session-token routes, for other modules' session routes. */
  readonly browser: BrowserAccess;
  /** The check of session routes that change how the user signs in: a sign-in or reauthentication within `REAUTH_WINDOW_SECONDS`. */
  readonly requireRecentAuthentication: RecentAuthenticationGuard;
  readonly routes: readonly RouteModule[];
  /** The email outbox job (tests call its `run()`) and the refresh grace window's cleanup. */
  readonly jobs: readonly PeriodicJob[];
  /** Closes the log-in throttle's Redis connection and the SMTP transport. */
  close(): Promise<void>;
}

function userModules(
  deps: Pick<AuthDependencies, 'db' | 'config' | 'clock' | 'audit' | 'userDeletionSteps' | 'userClaimSteps' | 'secrets'>,
) {
  const { db, config, clock, audit } = deps;
  const jwts = new SessionJwts({
    keys: new SigningKeys({ secrets: deps.secrets, alg: config.auth.sessionJwtAlg }),
    publicUrl: config.email.publicUrl,
    ttlSeconds: config.auth.sessionJwtTtlSeconds,
  });
  const sessions = new SessionsService({
    jwts,
    db,
    clock,
    audit,
    sessionTtlSeconds: config.auth.sessionTtlSeconds,
    refreshTtlSeconds: config.auth.refreshTtlSeconds,
    refreshReuseGraceSeconds: config.auth.refreshReuseGraceSeconds,
    reauthWindowSeconds: config.auth.reauthWindowSeconds,
    secrets: deps.secrets,
  });
  const roles = new RolesService({ db, clock, audit });
  const users = new UsersService({
    db,
    clock,
    sessions,
    roles,
    audit,
    deletionSteps: deps.userDeletionSteps ?? [],
    claimSteps: deps.userClaimSteps ?? [],
  });
  return { sessions, roles, users };
}

function emailJobWith(
  deps: AuthDependencies,
  users: UsersService,
  ownComposers: Readonly<Record<string, EmailComposer>>,
): { job: PeriodicJob; transport: EmailTransport } {
  const { db, config, clock, logger, projects } = deps;
  const transport = createEmailTransport(config, logger);
  const composers = {
    ...authEmailComposers({
      db,
      clock,
      users,
      projects,
      publicUrl: config.email.publicUrl,
      passwordResetUrl: config.auth.passwordResetUrl,
    }),
    ...securityNoticeComposers({ users, projects }),
    ...ownComposers,
    ...deps.emailComposers,
  };
  return { job: emailOutboxJob({ db, clock, logger, transport, composers }), transport };
}

export function createAuth(
  deps: AuthDependencies & {
    readonly rateLimiter: RateLimiter;
    /** Log in's failure throttle, built with the rate limiter (`http/limit-stores.ts`), which closes it. */
    readonly loginThrottle: LoginThrottle;
    /** Browser access (CORS) of the session-token routes, built by the HTTP layer (`http/cors.ts`). */
    readonly browser: BrowserAccess;
  },
): Auth {
  const { db, config, clock } = deps;
  const { sessions, roles, users } = userModules(deps);
  const { loginThrottle } = deps;
  const gate = new SignInGate({ db, clock, users, sessions, secrets: deps.secrets, throttle: loginThrottle, audit: deps.audit });
  const mfa = new MfaService({
    db,
    clock,
    users,
    projects: deps.projects,
    secrets: deps.secrets,
    throttle: loginThrottle,
    audit: deps.audit,
  });
  const emailCodes = new EmailCodesService({
    db,
    clock,
    users,
    sessions,
    gate,
    rateLimiter: deps.rateLimiter,
    throttle: loginThrottle,
    audit: deps.audit,
  });
  const service = new AuthService({
    db,
    clock,
    users,
    sessions,
    gate,
    loginThrottle,
    rateLimiter: deps.rateLimiter,
    audit: deps.audit,
    signupLimited: config.rateLimit.ipPerSecond > 0,
  });
  const { browser } = deps;
  const reauthentication = new Reauthentication({ db, clock, users, sessions, mfa, loginThrottle, audit: deps.audit });
  const requireRecentAuthentication: RecentAuthenticationGuard = async (request) => {
    const principal = request.principal;
    if (principal?.kind !== 'session') throw new Error(`${request.url} needs a recent sign-in but ran without a session principal`);
    await sessions.requireRecentAuthentication(principal);
  };
  const email = emailJobWith(deps, users, emailCodeComposers(emailCodes, deps.projects));
  return {
    users,
    roles,
    sessions,
    service,
    loginThrottle,
    gate,
    mfa,
    browser,
    requireRecentAuthentication,
    routes: [
      authRoutes(service, {
        browser,
        emailVerifiedRedirectUrl: config.auth.emailVerifiedRedirectUrl,
        reauthentication,
        requireRecentAuthentication,
      }),
      mfaRoutes({ mfa, gate, emailCodes, browser, requireRecentAuthentication }),
      sessionsRoutes(service, sessions, { browser: deps.browser, projects: deps.projects }),
      usersRoutes(users, roles, { browser }),
    ],
    jobs: [
      email.job,
      sealedSuccessorsCleanupJob({ db, clock, graceSeconds: config.auth.refreshReuseGraceSeconds }),
      mfaCleanupJob({ db, clock }),
    ],
    close() {
      email.transport.close();
      return Promise.resolve();
    },
  };
}

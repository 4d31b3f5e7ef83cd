import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../lib/routes.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Auth } from '../auth/auth.module.js';
import type { OAuth } from '../oauth/oauth.module.js';
import { ssoRoutes } from './sso.routes.js';
import { SsoConnections, type SsoOrganizations, SsoService } from './sso.service.js';
import { ConnectionSettings } from './sso.settings.js';
import { deleteDomainOfOrganization, deleteExpired } from './sso.store.js';
import type { DomainRemovalStep } from '../organizations/domains.service.js';

export interface SsoDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly audit: AuditService;
  readonly auth: Pick<Auth, 'users' | 'sessions' | 'gate'>;
  readonly organizations: SsoOrganizations;
  /** The OAuth module's provider client and secret box: one outbound HTTP setup, one key. */
  readonly oauth: Pick<OAuth, 'client' | 'secrets'>;
}

export interface Sso {
  readonly connections: SsoConnections;
  readonly service: SsoService;
  readonly routes: readonly RouteModule[];
  /** Deletes requests, codes and used assertion ids a day after they expired. */
  readonly jobs: readonly PeriodicJob[];
}

const RETENTION_MS = 24 * 60 * 60 * 1000;
const CLEANUP_BATCH = 1000;

/**
 * Enterprise SSO. OIDC connections use the OAuth module's client (discovery, PKCE, ID token checks),
 * so they follow the same outbound HTTP rules and test seam (`OAuthOptions.trustedCa`) as OAuth providers.
 */
export function createSso(deps: SsoDependencies): Sso {
  const { db, config, clock } = deps;
  const settings = new ConnectionSettings({ publicUrl: config.email.publicUrl, secrets: deps.oauth.secrets });
  const connections = new SsoConnections({
    db,
    clock,
    organizations: deps.organizations,
    audit: deps.audit,
    oauthClient: deps.oauth.client,
    secrets: deps.oauth.secrets,
    settings,
    allowInsecureHttp: config.oauth.allowInsecureHttp,
  });
  const service = new SsoService({
    db,
    clock,
    logger: deps.logger,
    users: deps.auth.users,
    sessions: deps.auth.sessions,
    gate: deps.auth.gate,
    audit: deps.audit,
    oauthClient: deps.oauth.client,
    secrets: deps.oauth.secrets,
    settings,
    organizations: deps.organizations,
  });
  const cleanup: PeriodicJob = {
    name: 'sso-cleanup',
    intervalMs: 10 * 60 * 1000,
    async run() {
      const before = isoTime(new Date(clock.now().getTime() - RETENTION_MS));
      while ((await deleteExpired(db.kysely, before, CLEANUP_BATCH)) > 0);
    },
  };
  return { connections, service, routes: [ssoRoutes(connections, service)], jobs: [cleanup] };
}

/**
 * The step the organizations module runs when a domain is removed: the organization's connection
 * answers only for verified domains, so it stops answering for that one in the same transaction.
 */
export function ssoDomainRemovalStep(): DomainRemovalStep {
  return (trx, domain) => deleteDomainOfOrganization(trx, domain);
}

import type { AuditService } from '../audit/audit.service.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../lib/routes.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { OutboundHttp } from '../../lib/outbound-http.js';
import { outboundFetch } from '../../lib/outbound-http.fetch.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Auth } from '../auth/auth.module.js';
import { OAuthClient } from './oauth.client.js';
import { oauthRoutes } from './oauth.routes.js';
import { OAuthProviders, OAuthService } from './oauth.service.js';
import { deleteExpiredStates } from './oauth.store.js';

export interface OAuthDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly auth: Pick<Auth, 'users' | 'sessions' | 'gate'>;
  /** The service's one keyring (built in main.ts): seals provider secrets and PKCE verifiers. */
  readonly secrets: SecretBox;
}

export interface OAuthOptions {
  /**
   * PEM of certificate authorities to trust for provider calls instead of the default store. For
   * tests, whose CA is made after the process started; production trusts the system store plus
   * NODE_EXTRA_CA_CERTS.
   */
  readonly trustedCa?: string;
}

export interface OAuth {
  readonly providers: OAuthProviders;
  readonly service: OAuthService;
  /** The provider client (discovery, PKCE, ID-token checks) over this module's outbound HTTP; SSO uses it too. */
  readonly client: OAuthClient;
  /** The service's keyring, as given; SSO seals its connections' secrets with it too. */
  readonly secrets: SecretBox;
  readonly routes: readonly RouteModule[];
  /** Deletes sign-in states a day after they expired. */
  readonly jobs: readonly PeriodicJob[];
  close(): Promise<void>;
}

const STATE_RETENTION_MS = 24 * 60 * 60 * 1000;
const CLEANUP_BATCH = 1000;

export function createOAuth(deps: OAuthDependencies, options: OAuthOptions = {}): OAuth {
  const { db, config, clock } = deps;
  const http = new OutboundHttp({
    allowPrivate: config.oauth.allowPrivate,
    allowHttp: config.oauth.allowInsecureHttp,
    userAgent: 'svc-oauth/1.0',
    ...(options.trustedCa === undefined ? {} : { trustedCa: options.trustedCa }),
  });
  const client = new OAuthClient({
    fetch: outboundFetch(http),
    endpoints: config.oauth.endpoints,
    allowInsecureHttp: config.oauth.allowInsecureHttp,
    clock,
  });
  const { secrets } = deps;
  const providers = new OAuthProviders({
    db,
    clock,
    audit: deps.audit,
    client,
    secrets,
    allowInsecureHttp: config.oauth.allowInsecureHttp,
  });
  const service = new OAuthService({
    db,
    clock,
    users: deps.auth.users,
    sessions: deps.auth.sessions,
    gate: deps.auth.gate,
    audit: deps.audit,
    client,
    secrets,
    providers,
  });
  const cleanup: PeriodicJob = {
    name: 'oauth-state-cleanup',
    intervalMs: 10 * 60 * 1000,
    async run() {
      const before = isoTime(new Date(clock.now().getTime() - STATE_RETENTION_MS));
      while ((await deleteExpiredStates(db.kysely, before, CLEANUP_BATCH)) === CLEANUP_BATCH);
    },
  };
  return {
    providers,
    service,
    client,
    secrets,
    routes: [oauthRoutes(providers, service)],
    jobs: [cleanup],
    close: () => http.close(),
  };
}

import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../lib/routes.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Auth } from '../auth/auth.module.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { UserClaimStep } from '../users/users.service.js';
import { PasskeyChallenges } from './passkeys.challenges.js';
import { passkeysRoutes } from './passkeys.routes.js';
import { PasskeysService, recordPasskeyChange } from './passkeys.service.js';
import * as store from './passkeys.store.js';
import { PasskeySignIn } from './passkeys.sign-in.js';

export interface PasskeysDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly projects: ProjectsService;
  readonly auth: Pick<Auth, 'users' | 'gate' | 'loginThrottle' | 'browser' | 'requireRecentAuthentication'>;
  readonly rateLimiter: RateLimiter;
}

/** Passkeys (WebAuthn): registration, listing, removal and sign-in (docs/adr/0017-passkeys.md). */
export interface Passkeys {
  readonly service: PasskeysService;
  readonly signIn: PasskeySignIn;
  readonly routes: readonly RouteModule[];
  /** Deletes ceremony challenges a day after they expired. */
  readonly jobs: readonly PeriodicJob[];
}

/**
 * The claim step of identity linking (docs/adr/0014-identity-linking.md, rule 5): when a sign-in
 * that proves the address claims an account nobody had verified, the passkeys its unproven holder
 * registered go with the password, or a squatter would keep signing in with them. Each removal
 * has its `user.passkey.removed` event and audit entry (reason `email_claim`).
 */
export function removePasskeysOfClaimedUser(deps: { audit: AuditService }): UserClaimStep {
  return async (trx, input) => {
    const passkeys = await store.listAllUserPasskeys(trx, input.projectId, input.userId);
    const now = isoTime(input.now);
    for (const passkey of passkeys) {
      await store.deletePasskey(trx, input.projectId, passkey.id);
      await recordPasskeyChange(trx, deps.audit, input.context, { passkey, kind: 'removed', now, reason: 'email_claim' });
    }
    return { passkeys_removed: passkeys.length };
  };
}

const CHALLENGE_RETENTION_MS = 24 * 60 * 60 * 1000;
const CLEANUP_BATCH = 1000;

export function createPasskeys(deps: PasskeysDependencies): Passkeys {
  const { db, clock, audit, projects } = deps;
  const challenges = new PasskeyChallenges({ db, clock });
  const service = new PasskeysService({ db, clock, audit, projects, users: deps.auth.users, challenges });
  const signIn = new PasskeySignIn({
    db,
    clock,
    audit,
    projects,
    users: deps.auth.users,
    gate: deps.auth.gate,
    challenges,
    loginThrottle: deps.auth.loginThrottle,
    rateLimiter: deps.rateLimiter,
    optionsLimited: deps.config.rateLimit.ipPerSecond > 0,
  });
  const cleanup: PeriodicJob = {
    name: 'passkey-challenge-cleanup',
    intervalMs: 10 * 60 * 1000,
    run: () => challenges.deleteExpired(new Date(clock.now().getTime() - CHALLENGE_RETENTION_MS), CLEANUP_BATCH),
  };
  return {
    service,
    signIn,
    routes: [
      passkeysRoutes(service, signIn, {
        browser: deps.auth.browser,
        requireRecentAuthentication: deps.auth.requireRecentAuthentication,
      }),
    ],
    jobs: [cleanup],
  };
}

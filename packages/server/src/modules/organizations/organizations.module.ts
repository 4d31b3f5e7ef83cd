import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { rowLockFor } from '../../db/transaction.js';
import type { RouteModule } from '../../lib/routes.js';
import type { Clock } from '../../lib/clock.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Auth } from '../auth/auth.module.js';
import type { EmailComposer } from '../email/email.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { UserDeletionStep } from '../users/users.service.js';
import { dnsTxtLookup } from './domains.dns.js';
import { organizationDomainsRoutes } from './domains.routes.js';
import { type DomainRemovalStep, OrganizationDomainsService } from './domains.service.js';
import { invitationEmailComposers } from './invitations.emails.js';
import { InvitationsService } from './invitations.service.js';
import { removeMembershipsOfDeletedUser } from './memberships.js';
import { organizationsRoutes } from './organizations.routes.js';
import { OrganizationsService } from './organizations.service.js';

export interface OrganizationsDependencies {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly projects: ProjectsService;
}

/**
 * What the organizations module hands the auth module when that is built (it is built first, since
 * organizations need its users and roles): the invitation email's composer, sent by the one email
 * outbox job, and the step that removes a deleted user's memberships in the deletion's transaction.
 */
export interface OrganizationsAuthHooks {
  readonly emailComposers: Readonly<Record<string, EmailComposer>>;
  readonly userDeletionSteps: readonly UserDeletionStep[];
}

export function organizationsAuthHooks(deps: OrganizationsDependencies): OrganizationsAuthHooks {
  const { db, config, clock, audit, projects } = deps;
  return {
    emailComposers: invitationEmailComposers({ db, clock, projects, acceptUrl: config.auth.invitationAcceptUrl }),
    userDeletionSteps: [removeMembershipsOfDeletedUser({ audit, rowLock: rowLockFor(db.dialect) })],
  };
}

/** Organizations, members, invitations, domains and authorization checks, with their routes. */
export interface Organizations {
  readonly service: OrganizationsService;
  readonly invitations: InvitationsService;
  readonly domains: OrganizationDomainsService;
  readonly routes: readonly RouteModule[];
}

export function createOrganizations(
  deps: OrganizationsDependencies & {
    readonly auth: Auth;
    /** What other modules do when a domain is removed (the SSO module's connections). */
    readonly domainRemovalSteps?: readonly DomainRemovalStep[];
  },
): Organizations {
  const { db, config, clock, audit, auth } = deps;
  const service = new OrganizationsService({ db, clock, audit, users: auth.users, roles: auth.roles });
  const invitations = new InvitationsService({ db, clock, audit, users: auth.users, organizations: service });
  const domains = new OrganizationDomainsService({
    db,
    clock,
    audit,
    lookupTxt: dnsTxtLookup(config.dnsServers),
    removalSteps: deps.domainRemovalSteps ?? [],
  });
  return {
    service,
    invitations,
    domains,
    routes: [organizationsRoutes({ organizations: service, invitations, browser: auth.browser }), organizationDomainsRoutes(domains)],
  };
}

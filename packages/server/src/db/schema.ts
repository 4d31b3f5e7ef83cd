import type { ProjectsDatabase } from './schema/projects.js';
import type { IdempotencyDatabase } from './schema/idempotency.js';
import type { WalletsDatabase } from './schema/wallets.js';
import type { EventsDatabase } from './schema/events.js';
import type { UsersDatabase } from './schema/users.js';
import type { SessionsDatabase } from './schema/sessions.js';
import type { AuthDatabase } from './schema/auth.js';
import type { EmailDatabase } from './schema/email.js';
import type { WebhooksDatabase } from './schema/webhooks.js';
import type { AuditDatabase } from './schema/audit.js';
import type { OAuthDatabase } from './schema/oauth.js';
import type { OrganizationsDatabase } from './schema/organizations.js';
import type { SsoDatabase } from './schema/sso.js';
import type { DashboardDatabase } from './schema/dashboard.js';
import type { PasskeysDatabase } from './schema/passkeys.js';
import type { MfaDatabase } from './schema/mfa.js';
import type { StatsDatabase } from './schema/stats.js';

export type * from './schema/projects.js';
export type * from './schema/idempotency.js';
export type * from './schema/wallets.js';
export type * from './schema/events.js';
export type * from './schema/users.js';
export type * from './schema/sessions.js';
export type * from './schema/auth.js';
export type * from './schema/email.js';
export type * from './schema/webhooks.js';
export type * from './schema/audit.js';
export type * from './schema/oauth.js';
export type * from './schema/organizations.js';
export type * from './schema/sso.js';
export type * from './schema/dashboard.js';
export type * from './schema/passkeys.js';
export type * from './schema/mfa.js';
export type * from './schema/stats.js';

/**
 * Table types, shared by both dialects. Times are ISO 8601 UTC text (sortable, identical on SQLite
 * and PostgreSQL); money and counters are 64-bit integers read back as JavaScript numbers (see
 * `db/database.ts`); JSON documents are text. See docs/adr/0001-one-schema-two-dialects.md.
 *
 * `Database` is the union of each module's tables, declared in `db/schema/<module>.ts`: under db/
 * rather than in the modules, because db/ imports no module, not even for types
 * (`db-imports-no-layer-above` in dependency-cruiser.config.js). Every name is re-exported here.
 */
export interface Database
  extends
    ProjectsDatabase,
    IdempotencyDatabase,
    WalletsDatabase,
    EventsDatabase,
    UsersDatabase,
    SessionsDatabase,
    AuthDatabase,
    EmailDatabase,
    WebhooksDatabase,
    AuditDatabase,
    OAuthDatabase,
    OrganizationsDatabase,
    SsoDatabase,
    DashboardDatabase,
    PasskeysDatabase,
    MfaDatabase,
    StatsDatabase {}

import type { Migration } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as wallets from './0002_wallets.js';
import * as auth from './0003_auth.js';
import * as webhooks from './0004_webhooks.js';
import * as ledgerIdempotencyIndex from './0005_ledger_idempotency_index.js';
import * as audit from './0006_audit.js';
import * as oauth from './0007_oauth.js';
import * as organizations from './0008_organizations.js';
import * as sso from './0009_sso.js';
import * as dashboard from './0010_dashboard.js';
import * as auditResourceIndex from './0011_audit_resource_index.js';
import * as eventIndexes from './0012_event_indexes.js';
import * as auditSealOrder from './0013_audit_seal_order.js';
import * as secretsAtRest from './0014_secrets_at_rest.js';
import * as sessionSuccessorSealed from './0015_session_successor_sealed.js';
import * as readIndexes from './0016_read_indexes.js';
import * as ssoCodeEmailVerified from './0017_sso_code_email_verified.js';
import * as mfa from './0018_mfa.js';
import * as passkeys from './0019_passkeys.js';
import * as webhookOperations from './0020_webhook_operations.js';
import * as ledgerOnePath from './0021_ledger_one_path.js';
import * as readAggregates from './0022_read_aggregates.js';
import * as holdsGrants from './0023_holds_grants.js';
import * as auditReadsLedger from './0025_audit_reads_ledger.js';
import * as balanceAt from './0027_balance_at.js';
import * as grantSpendingIndex from './0028_grant_spending_index.js';
import * as ledgerActorIndex from './0029_ledger_actor_index.js';
import * as accountSecurity from './0031_account_security.js';
import * as organizationDomains from './0032_organization_domains.js';
import * as movementKeys from './0033_movement_keys.js';
import * as sessionSigningKeys from './0034_session_signing_keys.js';
import * as webhookWorkers from './0035_webhook_workers.js';
import * as ledgerRequestContext from './0036_ledger_request_context.js';
import * as grantCategories from './0037_grant_categories.js';
import * as recurringGrants from './0038_recurring_grants.js';
import * as creditLimits from './0039_credit_limits.js';
import * as reversals from './0040_reversals.js';

/**
 * Every migration, in order, for both dialects. Add new ones at the end with the next number;
 * never edit one that has shipped.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_foundation': foundation,
  '0002_wallets': wallets,
  '0003_auth': auth,
  '0004_webhooks': webhooks,
  '0005_ledger_idempotency_index': ledgerIdempotencyIndex,
  '0006_audit': audit,
  '0007_oauth': oauth,
  '0008_organizations': organizations,
  '0009_sso': sso,
  '0010_dashboard': dashboard,
  '0011_audit_resource_index': auditResourceIndex,
  '0012_event_indexes': eventIndexes,
  '0013_audit_seal_order': auditSealOrder,
  '0014_secrets_at_rest': secretsAtRest,
  '0015_session_successor_sealed': sessionSuccessorSealed,
  '0016_read_indexes': readIndexes,
  '0017_sso_code_email_verified': ssoCodeEmailVerified,
  '0018_mfa': mfa,
  '0019_passkeys': passkeys,
  '0020_webhook_operations': webhookOperations,
  '0021_ledger_one_path': ledgerOnePath,
  '0022_read_aggregates': readAggregates,
  '0023_holds_grants': holdsGrants,
  '0025_audit_reads_ledger': auditReadsLedger,
  '0027_balance_at': balanceAt,
  '0028_grant_spending_index': grantSpendingIndex,
  '0029_ledger_actor_index': ledgerActorIndex,
  '0031_account_security': accountSecurity,
  '0032_organization_domains': organizationDomains,
  '0033_movement_keys': movementKeys,
  '0034_session_signing_keys': sessionSigningKeys,
  '0035_webhook_workers': webhookWorkers,
  '0036_ledger_request_context': ledgerRequestContext,
  '0037_grant_categories': grantCategories,
  '0038_recurring_grants': recurringGrants,
  '0039_credit_limits': creditLimits,
  '0040_reversals': reversals,
};

/**
 * Every action the audit log records, `<resource>.<verb>`. An entry's `outcome` says whether it was
 * done (`success`) or refused (the error code). Modules that add audited operations add their
 * actions here, so `?action=` can refuse a misspelt one.
 */
export const AUDIT_ACTIONS = [
  'wallet.create',
  'wallet.update',
  'wallet.freeze',
  'wallet.unfreeze',
  'wallet.close',
  'wallet.credit',
  'wallet.debit',
  'wallet.transfer',
  'user.signup',
  'user.login',
  'user.update',
  'user.delete',
  'user.ban',
  'user.unban',
  'user.email_verify',
  'user.verification_email_send',
  'user.password_forgot',
  'user.password_reset',
  'user.password_change',
  'user.sessions_revoke',
  'session.refresh',
  'session.refresh_token_reused',
  'session.revoke',
  'session.logout',
  'secret_key.create',
  'secret_key.revoke',
  'webhook_endpoint.create',
  'webhook_endpoint.update',
  'webhook_endpoint.rotate_secret',
  'webhook_endpoint.delete',
  'webhook_endpoint.test',
  'webhook_delivery.retry',
  'role.create',
  'role.update',
  'role.delete',
  'organization.create',
  'organization.update',
  'organization.delete',
  'organization_member.add',
  'organization_member.update',
  'organization_member.remove',
  'invitation.create',
  'invitation.revoke',
  'invitation.accept',
  'sso_connection.create',
  'sso_connection.delete',
  'user.sso_login',
  'oauth_provider.configure',
  'oauth_provider.delete',
  'user.oauth_login',
  'user.identity_unlink',
  'user.email_claim',
  'project.update',
  'passkey.create',
  'passkey.delete',
  'user.passkey_login',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/**
 * The events a webhook delivery carries (docs/api.md section 5), as a union discriminated by
 * `type`: `switch (event.type)` narrows `event.data`. New types may be added to the service over
 * time; a receiver should answer 200 to types it does not know and ignore them. `GET /v1/event-types`
 * (`listEventTypes`) serves the JSON Schema of each type's data, from the service's catalog.
 */

interface Envelope<Type extends string, Data> {
  /** `evt_…`, the same id as the `webhook-id` header. */
  readonly id: string;
  readonly type: Type;
  readonly created_at: string;
  readonly data: Data;
  /** The same on every attempt to every endpoint: de-duplicate by it. */
  readonly idempotency_key: string;
}

export interface WalletMovementEventData {
  readonly wallet_id: string;
  readonly transaction_id: string;
  readonly amount: number;
  /** The wallet's balance after the movement. */
  readonly balance: number;
  readonly description: string | null;
}

export interface WalletTransferEventData {
  readonly transfer_id: string;
  /** The source wallet's id. */
  readonly from: string;
  /** The destination wallet's id. */
  readonly to: string;
  readonly amount: number;
  readonly status: 'completed';
}

export interface WalletBalanceLowEventData {
  readonly wallet_id: string;
  readonly balance: number;
  readonly threshold: number;
  readonly currency: string;
}

/** `wallet.hold.created`, `.captured`, `.voided`, `.expired`: the hold after the change. */
export interface WalletHoldEventData {
  readonly hold_id: string;
  readonly wallet_id: string;
  readonly amount: number;
  readonly captured_amount: number;
  readonly status: 'pending' | 'captured' | 'voided' | 'expired';
  /** The debit a capture made; null otherwise. */
  readonly transaction_id: string | null;
  readonly expires_at: string;
}

/** `wallet.credit.expired`: what was left of a grant left the wallet. */
export interface WalletCreditExpiredEventData {
  readonly wallet_id: string;
  readonly grant_id: string;
  readonly amount: number;
  readonly balance: number;
}

/** `wallet.transaction.reversed`: a credit, debit or transfer was reversed in whole or in part. */
export interface WalletTransactionReversedEventData {
  readonly wallet_id: string;
  readonly transaction_id: string;
  readonly reversal_id: string;
  readonly amount: number;
  readonly balance: number;
}

/** `user.mfa.enabled`, `user.mfa.disabled`: `by` is `administrator` for a reset with the secret key. */
export interface UserMfaEventData {
  readonly user_id: string;
  readonly method: 'totp';
  readonly by: 'user' | 'administrator';
}

export interface UserEventData {
  readonly user_id: string;
  readonly email: string;
}

export interface SessionCreatedEventData {
  /** `svc_ses_<ref>`: the session token up to the dot, never the token itself. */
  readonly session_id: string;
  readonly user_id: string;
}

/** `user.passkey.added`, `user.passkey.removed`. */
export interface PasskeyEventData {
  readonly user_id: string;
  /** `pk_…`. */
  readonly passkey_id: string;
  readonly name: string;
}

export type SessionRevokedReason =
  'logout' | 'revoked' | 'refreshed' | 'refresh_token_reuse' | 'password_reset' | 'user_banned' | 'user_deleted';

export interface SessionRevokedEventData {
  readonly session_id: string;
  readonly user_id: string;
  readonly reason: SessionRevokedReason;
}

export interface OrganizationCreatedEventData {
  readonly organization_id: string;
  readonly name: string;
  readonly slug: string;
}

export interface OrganizationMemberAddedEventData {
  readonly organization_id: string;
  readonly user_id: string;
  /** The key of one of the project's roles. */
  readonly role: string;
}

export interface OrganizationMemberRemovedEventData extends OrganizationMemberAddedEventData {
  readonly reason: 'removed' | 'user_deleted' | 'organization_deleted';
}

export interface OrganizationInvitationAcceptedEventData extends OrganizationMemberAddedEventData {
  readonly invitation_id: string;
  /** The address the invitation was sent to. */
  readonly email: string;
}

export interface OrganizationDomainVerifiedEventData {
  readonly organization_id: string;
  /** Lower case, ASCII (punycode). */
  readonly domain: string;
  readonly verification: 'dns' | 'manual';
}

/** Any organization event's data. */
export type OrganizationEventData =
  | OrganizationCreatedEventData
  | OrganizationMemberAddedEventData
  | OrganizationMemberRemovedEventData
  | OrganizationInvitationAcceptedEventData
  | OrganizationDomainVerifiedEventData;

export interface WebhookTestEventData {
  readonly endpoint_id: string;
}

/** Sent to a project's other endpoints when one is switched off for failing. */
export interface WebhookEndpointDisabledEventData {
  /** The endpoint switched off, `we_…`. */
  readonly endpoint_id: string;
  readonly reason: 'failing';
  /** The first failed attempt since its last success. */
  readonly failing_since: string;
  /** Deliveries that ended `failed` since then. */
  readonly failed_deliveries: number;
}

export type WebhookEvent =
  | Envelope<'wallet.credit.added', WalletMovementEventData>
  | Envelope<'wallet.credit.deducted', WalletMovementEventData>
  | Envelope<'wallet.transfer.sent', WalletTransferEventData>
  | Envelope<'wallet.transfer.received', WalletTransferEventData>
  | Envelope<'wallet.balance.low', WalletBalanceLowEventData>
  | Envelope<'wallet.hold.created', WalletHoldEventData>
  | Envelope<'wallet.hold.captured', WalletHoldEventData>
  | Envelope<'wallet.hold.voided', WalletHoldEventData>
  | Envelope<'wallet.hold.expired', WalletHoldEventData>
  | Envelope<'wallet.credit.expired', WalletCreditExpiredEventData>
  | Envelope<'wallet.transaction.reversed', WalletTransactionReversedEventData>
  | Envelope<'user.created', UserEventData>
  | Envelope<'user.updated', UserEventData>
  | Envelope<'user.deleted', UserEventData>
  | Envelope<'user.email_verified', UserEventData>
  | Envelope<'user.passkey.added', PasskeyEventData>
  | Envelope<'user.passkey.removed', PasskeyEventData>
  | Envelope<'user.mfa.enabled', UserMfaEventData>
  | Envelope<'user.mfa.disabled', UserMfaEventData>
  | Envelope<'session.created', SessionCreatedEventData>
  | Envelope<'session.revoked', SessionRevokedEventData>
  | Envelope<'organization.created', OrganizationCreatedEventData>
  | Envelope<'organization.member.added', OrganizationMemberAddedEventData>
  | Envelope<'organization.member.removed', OrganizationMemberRemovedEventData>
  | Envelope<'organization.invitation.accepted', OrganizationInvitationAcceptedEventData>
  | Envelope<'organization.domain.verified', OrganizationDomainVerifiedEventData>
  | Envelope<'webhook_endpoint.disabled', WebhookEndpointDisabledEventData>
  | Envelope<'webhook.test', WebhookTestEventData>;

export type WebhookEventType = WebhookEvent['type'];

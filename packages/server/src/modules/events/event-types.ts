import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * The event catalog (docs/api.md section 5): every event type the service emits, with a JSON
 * Schema of its `data`. This is the one definition: the services build each event's data typed
 * with `EventData<type>` (derived from the schema here), `GET /v1/event-types` lists these schemas
 * and the OpenAPI document publishes them as `webhooks` entries (http/openapi.ts).
 */

function data<P extends Parameters<typeof Type.Object>[0]>(properties: P) {
  return Type.Object(properties, { additionalProperties: false });
}

const Id = (description: string) => Type.String({ description });
const WalletId = Id('The wallet, `wlt_…`.');
const UserId = Id('The user, `usr_…`.');
const OrganizationId = Id('The organization, `org_…`.');
const Credits = Type.Integer({ description: 'Whole credits.' });

const WalletMovementData = data({
  wallet_id: WalletId,
  transaction_id: Id('The credit or debit, `txn_…`.'),
  amount: Type.Integer({ minimum: 1, description: 'The credits added or deducted.' }),
  balance: Type.Integer({ description: "The wallet's balance after the movement." }),
  description: Type.Union([Type.String(), Type.Null()]),
});

const WalletTransferData = data({
  transfer_id: Id('The transfer, `txn_…`.'),
  from: Id("The source wallet's id."),
  to: Id("The destination wallet's id."),
  amount: Type.Integer({ minimum: 1 }),
  status: Type.Literal('completed'),
});

const WalletBalanceLowData = data({
  wallet_id: WalletId,
  balance: Type.Integer({ description: 'The balance after the debit or transfer, below the threshold.' }),
  threshold: Credits,
  currency: Type.String({ description: "The wallet's currency code." }),
});

const WalletHoldData = data({
  hold_id: Id('The hold, `hld_…`.'),
  wallet_id: WalletId,
  amount: Type.Integer({ minimum: 1, description: 'The credits the hold reserved.' }),
  captured_amount: Credits,
  status: Type.Union([Type.Literal('pending'), Type.Literal('captured'), Type.Literal('voided'), Type.Literal('expired')]),
  transaction_id: Type.Union([Id('The debit a capture made, `txn_…`.'), Type.Null()]),
  expires_at: Type.String({ format: 'date-time' }),
});

const WalletCreditExpiredData = data({
  wallet_id: WalletId,
  grant_id: Id('The grant that expired, `grt_…`.'),
  amount: Type.Integer({ minimum: 1, description: 'The credits that left the wallet.' }),
  balance: Type.Integer({ description: "The wallet's balance after the expiry." }),
});

const WalletTransactionReversedData = data({
  wallet_id: Id(
    'The wallet the reversal gave credits back to (a debit or transfer reversed) or took them from (a credit reversed), `wlt_…`.',
  ),
  transaction_id: Id('The transaction reversed, `txn_…`.'),
  reversal_id: Id('The reversal, a transaction of type `reversal`, `txn_…`.'),
  amount: Type.Integer({ minimum: 1, description: 'The credits the reversal moved.' }),
  balance: Type.Integer({ description: "The wallet's balance after the reversal." }),
});

const UserData = data({ user_id: UserId, email: Type.String() });

const SessionCreatedData = data({
  session_id: Id('`svc_ses_<ref>`: the session token up to the dot, never the token itself.'),
  user_id: UserId,
});

export const SESSION_REVOKED_REASONS = [
  'logout',
  'revoked',
  'refreshed',
  'refresh_token_reuse',
  'password_reset',
  'user_banned',
  'user_deleted',
] as const;

const SessionRevokedData = data({
  session_id: Id('`svc_ses_<ref>`: the session token up to the dot, never the token itself.'),
  user_id: UserId,
  reason: Type.Union(SESSION_REVOKED_REASONS.map((reason) => Type.Literal(reason))),
});

const UserMfaData = data({
  user_id: UserId,
  method: Type.Literal('totp', { description: 'The factor: `totp`, an authenticator app.' }),
  by: Type.Union([Type.Literal('user'), Type.Literal('administrator')], {
    description: '`user`: the user, with a code; `administrator`: a secret key reset it (`DELETE /v1/users/{id}/mfa`).',
  }),
});

const Role = Type.String({ description: "The key of one of the project's roles." });

const PasskeyData = data({
  user_id: UserId,
  passkey_id: Id('The passkey, `pk_…`.'),
  name: Type.String({ description: "The passkey's label." }),
});

const EVENT_CATALOG_DEFINITIONS = {
  'wallet.credit.added': { description: 'Credits were added to a wallet.', data: WalletMovementData },
  'wallet.credit.deducted': { description: 'Credits were deducted from a wallet.', data: WalletMovementData },
  'wallet.transfer.sent': { description: 'A transfer left its source wallet.', data: WalletTransferData },
  'wallet.transfer.received': { description: 'A transfer reached its destination wallet.', data: WalletTransferData },
  'wallet.balance.low': {
    description: "A debit or transfer took a wallet's balance from at or above its `low_balance_threshold` to below it.",
    data: WalletBalanceLowData,
  },
  'wallet.hold.created': {
    description: 'A hold reserved credits of a wallet: they leave its `available`, not its balance.',
    data: WalletHoldData,
  },
  'wallet.hold.captured': { description: 'A hold was captured: `captured_amount` was debited, the rest released.', data: WalletHoldData },
  'wallet.hold.voided': { description: 'A hold was voided: its credits are available again.', data: WalletHoldData },
  'wallet.hold.expired': {
    description: 'A hold passed its `expires_at` uncaptured: its credits are available again.',
    data: WalletHoldData,
  },
  'wallet.credit.expired': {
    description: 'A grant expired: what was left of it left the wallet (a transaction of type `expiry`).',
    data: WalletCreditExpiredData,
  },
  'wallet.transaction.reversed': {
    description:
      'A credit, debit or transfer was reversed in whole or in part (a transaction of type `reversal`, docs/adr/0024-reversals.md).',
    data: WalletTransactionReversedData,
  },
  'user.created': { description: 'A user signed up or was created.', data: UserData },
  'user.updated': { description: "A user's profile, role, status or password changed.", data: UserData },
  'user.deleted': { description: 'A user was deleted.', data: UserData },
  'user.email_verified': { description: "A user's email address was verified, the first time.", data: UserData },
  'user.passkey.added': { description: 'A user registered a passkey.', data: PasskeyData },
  'user.passkey.removed': { description: 'A passkey was removed, by its user or with a secret key.', data: PasskeyData },
  'user.mfa.enabled': { description: 'A user confirmed an authenticator app: log in now needs its code.', data: UserMfaData },
  'user.mfa.disabled': { description: "A user's authenticator app was removed, by the user or an administrator.", data: UserMfaData },
  'session.created': { description: 'A session was issued (log-in, sign-up, refresh).', data: SessionCreatedData },
  'session.revoked': { description: 'A session ended, for `reason`.', data: SessionRevokedData },
  'organization.created': {
    description: 'An organization was created.',
    data: data({ organization_id: OrganizationId, name: Type.String(), slug: Type.String() }),
  },
  'organization.member.added': {
    description: 'A user became a member of an organization.',
    data: data({ organization_id: OrganizationId, user_id: UserId, role: Role }),
  },
  'organization.member.removed': {
    description: 'A user stopped being a member of an organization, for `reason`.',
    data: data({
      organization_id: OrganizationId,
      user_id: UserId,
      role: Role,
      reason: Type.Union([Type.Literal('removed'), Type.Literal('user_deleted'), Type.Literal('organization_deleted')]),
    }),
  },
  'organization.invitation.accepted': {
    description: 'An invitation to an organization was accepted; the user is now a member.',
    data: data({
      organization_id: OrganizationId,
      invitation_id: Id('The invitation, `inv_…`.'),
      user_id: UserId,
      email: Type.String({ description: 'The address the invitation was sent to.' }),
      role: Role,
    }),
  },
  'organization.domain.verified': {
    description:
      "An organization's email domain was verified (its TXT record found, or the operator's word); SSO through its connection answers for it.",
    data: data({
      organization_id: OrganizationId,
      domain: Type.String({ description: 'Lower case, ASCII (punycode).' }),
      verification: Type.Union([Type.Literal('dns'), Type.Literal('manual')]),
    }),
  },
  'webhook_endpoint.disabled': {
    description:
      "A webhook endpoint was switched off because every attempt to it failed for `WEBHOOK_DISABLE_AFTER_SECONDS`; sent to the project's other endpoints.",
    data: data({
      endpoint_id: Id('The endpoint switched off, `we_…`.'),
      reason: Type.Literal('failing'),
      failing_since: Type.String({ format: 'date-time', description: 'The first failed attempt since its last success.' }),
      failed_deliveries: Type.Integer({ minimum: 1, description: 'Deliveries that ended `failed` since then.' }),
    }),
  },
  'webhook.test': {
    description: 'Sent by `POST /v1/webhooks/{id}/test` to that endpoint only.',
    data: data({ endpoint_id: Id('The webhook endpoint, `we_…`.') }),
  },
} as const satisfies Record<string, { readonly description: string; readonly data: TSchema }>;

export type EventType = keyof typeof EVENT_CATALOG_DEFINITIONS;

/** The `data` of an event of type `T`, as its schema describes it. */
export type EventData<T extends EventType> = Static<(typeof EVENT_CATALOG_DEFINITIONS)[T]['data']>;

export interface EventTypeDefinition {
  readonly description: string;
  readonly data: TSchema;
}

export const EVENT_CATALOG: Readonly<Record<EventType, EventTypeDefinition>> = EVENT_CATALOG_DEFINITIONS;

/** Every event type, in catalog order; an endpoint subscribes to these (or "*"). */
export const EVENT_TYPES = Object.keys(EVENT_CATALOG_DEFINITIONS) as readonly EventType[];

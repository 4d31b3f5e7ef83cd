import { Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import type { AuditActor } from './audit.context.js';

const Time = Type.String({ format: 'date-time' });
const NullableString = Type.Union([Type.String(), Type.Null()]);
const Hash = Type.Union([Type.String({ pattern: '^[0-9a-f]{64}$' }), Type.Null()]);

export const ActorSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('secret_key'), id: Type.String({ description: 'The key, `key_…`.' }) }),
    Type.Object({
      type: Type.Literal('session'),
      id: Type.String({ description: 'The session, `svc_ses_<ref>`: its name, never the token.' }),
      user_id: Type.String(),
    }),
    Type.Object({ type: Type.Literal('dashboard'), key_id: Type.String() }),
    Type.Object({ type: Type.Literal('system') }),
    Type.Object({ type: Type.Literal('anonymous') }),
  ],
  { description: 'Who made the request: a secret key, a session, the dashboard, the service or an operator (system), or a public link.' },
);

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `aud_`.' }),
    object: Type.Literal('audit_log'),
    created_at: Time,
    action: Type.String({ description: '`<resource>.<verb>`, e.g. `wallet.credit`, `session.refresh_token_reused`.' }),
    actor: ActorSchema,
    resource: Type.Object({ type: Type.String(), id: NullableString }),
    request_id: NullableString,
    ip: NullableString,
    user_agent: NullableString,
    outcome: Type.String({ description: '`success`, or the error code the request was refused with.' }),
    changes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
      description: 'What changed, e.g. the amount and the balances before and after. Never a secret.',
    }),
    hash: Type.Union([Hash], { description: "SHA-256 of `prev_hash` and this entry's content; null until sealed (within seconds)." }),
    prev_hash: Type.Union([Hash], { description: "The previous link's hash in the project's chain; null until sealed." }),
  },
  { $id: 'AuditLogEntry' },
);

export interface AuditEntry {
  id: string;
  object: 'audit_log';
  created_at: string;
  action: string;
  actor: AuditActor;
  resource: { type: string; id: string | null };
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  outcome: string;
  changes: Record<string, string | number | boolean | null>;
  hash: string | null;
  prev_hash: string | null;
}

export const AuditListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(AuditEntrySchema), has_more: Type.Boolean() },
  { $id: 'AuditLogList' },
);

export interface AuditList {
  object: 'list';
  data: AuditEntry[];
  has_more: boolean;
}

const Since = Type.Optional(Type.String({ format: 'date-time', description: 'Entries created at or after this time.' }));
const Until = Type.Optional(Type.String({ format: 'date-time', description: 'Entries created before this time.' }));

export const ListAuditQuery = StrictObject({
  ...ListQuery,
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this action, e.g. `wallet.credit`.' })),
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this key (`key_…`) or session (`svc_ses_…`).' })),
  resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only entries about this wallet, user, endpoint…' })),
  since: Since,
  until: Until,
});
export interface ListAuditQuery {
  limit?: number;
  starting_after?: string;
  action?: string;
  actor_id?: string;
  resource_id?: string;
  since?: string;
  until?: string;
}

export const ExportAuditQuery = StrictObject({ since: Since, until: Until });
export interface ExportAuditQuery {
  since?: string;
  until?: string;
}

export const AuditParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `aud_`.' }) });

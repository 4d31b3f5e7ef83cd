import type { FastifyRequest } from 'fastify';

/** Who made a change (docs/adr/0007-audit-log.md). Never a secret: a key by its id, a session by its name. */
export type AuditActor =
  | { readonly type: 'secret_key'; readonly id: string }
  | { readonly type: 'session'; readonly id: string; readonly user_id: string }
  | { readonly type: 'dashboard'; readonly key_id: string }
  | { readonly type: 'system' }
  | { readonly type: 'anonymous' };

/** Who asked and from where: the part of an entry that comes from the request, built once per request. */
export interface AuditContext {
  readonly actor: AuditActor;
  readonly requestId: string | null;
  readonly ip: string | null;
  readonly userAgent: string | null;
}

/**
 * The audit context of an HTTP request: its principal as the actor (a public route's caller is
 * `anonymous`), its request id, and its client's IP and user agent: the end user a secret key's
 * request names (`X-End-User-IP`, `X-End-User-Agent`), else the connection's (docs/architecture.md,
 * "End-user context").
 */
export function auditContext(request: FastifyRequest): AuditContext {
  const principal = request.principal;
  let actor: AuditActor;
  if (principal?.kind === 'secret_key')
    actor = principal.via === 'dashboard' ? { type: 'dashboard', key_id: principal.keyId } : { type: 'secret_key', id: principal.keyId };
  else if (principal?.kind === 'session') actor = { type: 'session', id: principal.sessionName, user_id: principal.userId };
  else actor = { type: 'anonymous' };
  const client = request.client;
  return { actor, requestId: request.id, ip: client.ip, userAgent: client.userAgent ?? null };
}

/** Changes made by the service itself or by an operator through the CLI. */
export const SYSTEM_AUDIT_CONTEXT: AuditContext = { actor: { type: 'system' }, requestId: null, ip: null, userAgent: null };

/** The actor as stored: a type and up to two ids. */
export function actorColumns(actor: AuditActor): { actor_type: string; actor_id: string | null; actor_user_id: string | null } {
  switch (actor.type) {
    case 'secret_key':
      return { actor_type: actor.type, actor_id: actor.id, actor_user_id: null };
    case 'session':
      return { actor_type: actor.type, actor_id: actor.id, actor_user_id: actor.user_id };
    case 'dashboard':
      return { actor_type: actor.type, actor_id: actor.key_id, actor_user_id: null };
    case 'system':
    case 'anonymous':
      return { actor_type: actor.type, actor_id: null, actor_user_id: null };
  }
}

/** The actor as the API shows it, from its stored columns. */
export function actorFromColumns(row: { actor_type: string; actor_id: string | null; actor_user_id: string | null }): AuditActor {
  switch (row.actor_type) {
    case 'secret_key':
      return { type: 'secret_key', id: row.actor_id ?? '' };
    case 'session':
      return { type: 'session', id: row.actor_id ?? '', user_id: row.actor_user_id ?? '' };
    case 'dashboard':
      return { type: 'dashboard', key_id: row.actor_id ?? '' };
    case 'system':
      return { type: 'system' };
    default:
      return { type: 'anonymous' };
  }
}

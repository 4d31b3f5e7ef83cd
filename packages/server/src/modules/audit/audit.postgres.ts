import { type RawBuilder, sql } from 'kysely';
import { actorColumns, type AuditContext } from './audit.context.js';

/**
 * The audit write of a one-statement change on PostgreSQL (the ledger's credits, debits and
 * transfers): a data-modifying CTE inserting the entries, to put inside the change's own statement
 * so that the entry costs no round trip (docs/adr/0007-audit-log.md). `txid` is left to its
 * default, the writing transaction's id, the order the sealer chains entries in.
 * `select` yields the entry columns in this order: id, project_id, created_at, action, actor_type,
 * actor_id, actor_user_id, resource_type, resource_id, request_id, ip, user_agent, outcome, changes.
 * Begins with a comma: it follows the statement's other CTEs.
 */
export function auditEntryCtes(select: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`, audit_entries as (
      insert into audit_log (id, project_id, created_at, action, actor_type, actor_id, actor_user_id, resource_type, resource_id,
                             request_id, ip, user_agent, outcome, changes)
      ${select}
    )`;
}

/** The columns of an entry that come from its request, as statement parameters. */
export interface StatementAuditContext {
  readonly actorType: string;
  readonly actorId: string | null;
  readonly actorUserId: string | null;
  readonly requestId: string | null;
  readonly ip: string | null;
  readonly userAgent: string | null;
}

export function statementAuditContext(context: AuditContext): StatementAuditContext {
  const actor = actorColumns(context.actor);
  return {
    actorType: actor.actor_type,
    actorId: actor.actor_id,
    actorUserId: actor.actor_user_id,
    requestId: context.requestId,
    ip: context.ip,
    userAgent: context.userAgent,
  };
}

import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, rowLockFor, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditAction, AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import { CUSTOM_ROLES_MAX, type CreateRoleBody, type Role, type UpdateRoleBody } from './users.schemas.js';
import * as store from './users.store.js';

/**
 * The roles every project has. They are not stored and cannot be changed or deleted, so every
 * project can rely on them (organizations give members one of them by default).
 */
export const BUILT_IN_ROLES: readonly Role[] = [
  { object: 'role', key: 'owner', name: 'Owner', permissions: ['*'], built_in: true, created_at: null, updated_at: null },
  { object: 'role', key: 'admin', name: 'Admin', permissions: ['*'], built_in: true, created_at: null, updated_at: null },
  { object: 'role', key: 'member', name: 'Member', permissions: [], built_in: true, created_at: null, updated_at: null },
];

const BUILT_IN_ROLE_KEYS = new Set(BUILT_IN_ROLES.map((role) => role.key));

/** Users a deleted role is taken off per transaction (see `RolesService.delete`). */
export const ROLE_REMOVAL_USERS_PER_TRANSACTION = 500;

export interface RolesServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
}

/** Roles with permissions (`POST/GET/PATCH/DELETE /roles`), which users and members carry by key. */
export class RolesService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;

  constructor(options: RolesServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
  }

  async create(projectId: string, input: CreateRoleBody, context: AuditContext): Promise<Role> {
    return this.#audit.recordingRefusals(context, roleRecord(projectId, input.key, 'role.create'), () =>
      this.#create(projectId, input, context),
    );
  }

  async #create(projectId: string, input: CreateRoleBody, context: AuditContext): Promise<Role> {
    if (BUILT_IN_ROLE_KEYS.has(input.key)) {
      throw new ApiError('role_key_taken', `"${input.key}" is a built-in role.`, { param: 'key' });
    }
    const now = isoTime(this.#clock.now());
    const row: store.RoleRow = {
      project_id: projectId,
      key: input.key,
      name: input.name,
      permissions: JSON.stringify(input.permissions),
      created_at: now,
      updated_at: now,
    };
    try {
      await inTransaction(this.#db, async (trx) => {
        if ((await store.countRoles(trx, projectId)) >= CUSTOM_ROLES_MAX) {
          throw new ApiError('parameter_invalid', `A project has at most ${CUSTOM_ROLES_MAX} custom roles.`, { param: 'key' });
        }
        await store.insertRole(trx, row);
        await this.#audit.record(trx, context, {
          ...roleRecord(projectId, input.key, 'role.create'),
          changes: { permissions: input.permissions.join(',') },
          createdAt: now,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ApiError('role_key_taken', `A role "${input.key}" already exists.`, { param: 'key' });
      throw error;
    }
    return toRole(row);
  }

  async get(projectId: string, key: string): Promise<Role> {
    const builtIn = BUILT_IN_ROLES.find((role) => role.key === key);
    if (builtIn !== undefined) return builtIn;
    const row = await store.findRole(this.#db.kysely, projectId, key);
    if (row === undefined) throw new ApiError('resource_missing', `No role ${key}.`, { param: 'key' });
    return toRole(row);
  }

  /** Custom roles newest first, then the built-in ones: at most 100, always one page. */
  async list(projectId: string): Promise<{ object: 'list'; data: Role[]; has_more: false }> {
    const custom = (await store.listRoles(this.#db.kysely, projectId)).map(toRole);
    return { object: 'list', data: [...custom, ...BUILT_IN_ROLES], has_more: false };
  }

  async update(projectId: string, key: string, input: UpdateRoleBody, context: AuditContext): Promise<Role> {
    const record = roleRecord(projectId, key, 'role.update');
    return this.#audit.recordingRefusals(context, record, async () => {
      this.#refuseBuiltIn(key);
      const row = await inTransaction(this.#db, async (trx) => {
        const updated = await store.updateRole(trx, projectId, key, {
          ...(input.name === undefined ? {} : { name: input.name }),
          ...(input.permissions === undefined ? {} : { permissions: JSON.stringify(input.permissions) }),
          updated_at: isoTime(this.#clock.now()),
        });
        if (updated === undefined) throw new ApiError('resource_missing', `No role ${key}.`, { param: 'key' });
        await this.#audit.record(trx, context, {
          ...record,
          changes: input.permissions === undefined ? {} : { permissions: input.permissions.join(',') },
        });
        return updated;
      });
      return toRole(row);
    });
  }

  /**
   * Deletes a custom role and takes it off every user that had it; each such user gets a
   * `user.updated` event. The project's users are read a page at a time outside any write
   * transaction, and a page's holders changed in one transaction (at most
   * `ROLE_REMOVAL_USERS_PER_TRANSACTION` users, each read again under its row lock); the role goes
   * last, with the audit entry, in a transaction of its own. No transaction grows with the
   * project's users, and a deletion cut short leaves the role in place (some users without it),
   * which the same DELETE run again finishes. While it runs the role exists, so no user can be left
   * holding a deleted key that a new role of the same key would give back.
   */
  async delete(projectId: string, key: string, context: AuditContext): Promise<{ key: string; object: 'role'; deleted: true }> {
    const record = roleRecord(projectId, key, 'role.delete');
    await this.#audit.recordingRefusals(context, record, () => this.#delete(projectId, key, context, record));
    return { key, object: 'role', deleted: true };
  }

  async #delete(projectId: string, key: string, context: AuditContext, record: AuditRecord): Promise<void> {
    this.#refuseBuiltIn(key);
    if ((await store.findRole(this.#db.kysely, projectId, key)) === undefined) {
      throw new ApiError('resource_missing', `No role ${key}.`, { param: 'key' });
    }
    let after: store.UserCursor | undefined;
    do {
      const page = await store.findUserRolesPage(this.#db.kysely, projectId, { after, limit: ROLE_REMOVAL_USERS_PER_TRANSACTION });
      const holders = page.filter((user) => (JSON.parse(user.roles) as string[]).includes(key)).map((user) => user.id);
      if (holders.length > 0) await inTransaction(this.#db, (trx) => this.#takeOffUsers(trx, projectId, key, holders));
      const last = page.at(-1);
      after =
        last === undefined || page.length < ROLE_REMOVAL_USERS_PER_TRANSACTION ? undefined : { createdAt: last.created_at, id: last.id };
    } while (after !== undefined);
    await inTransaction(this.#db, async (trx) => {
      if (!(await store.deleteRole(trx, projectId, key))) throw new ApiError('resource_missing', `No role ${key}.`, { param: 'key' });
      await this.#audit.record(trx, context, { ...record, createdAt: isoTime(this.#clock.now()) });
    });
  }

  /** One page of the deletion: the role off these users, each read again under its lock. */
  async #takeOffUsers(trx: Transaction, projectId: string, key: string, userIds: readonly string[]): Promise<void> {
    const now = isoTime(this.#clock.now());
    for (const userId of userIds) {
      const user = await store.findUserLocked(trx, projectId, userId, rowLockFor(this.#db.dialect));
      const roles = user === undefined ? [] : (JSON.parse(user.roles) as string[]);
      if (user === undefined || !roles.includes(key)) continue;
      await store.updateUser(trx, projectId, user.id, { roles: JSON.stringify(roles.filter((role) => role !== key)), updated_at: now });
      await recordEvent(trx, { projectId, type: 'user.updated', data: { user_id: user.id, email: user.email }, createdAt: now });
    }
  }

  /** The keys among `keys` that are not roles of the project. */
  async unknownKeys(projectId: string, keys: readonly string[]): Promise<string[]> {
    const custom = keys.filter((key) => !BUILT_IN_ROLE_KEYS.has(key));
    const found = new Set((await store.findRoles(this.#db.kysely, projectId, custom)).map((row) => row.key));
    return custom.filter((key) => !found.has(key));
  }

  #refuseBuiltIn(key: string): void {
    if (BUILT_IN_ROLE_KEYS.has(key)) {
      throw new ApiError('parameter_invalid', `"${key}" is a built-in role and cannot be changed or deleted.`, { param: 'key' });
    }
  }
}

function roleRecord(projectId: string, key: string, action: AuditAction): AuditRecord {
  return { projectId, action, resource: { type: 'role', id: key } };
}

function toRole(row: store.RoleRow): Role {
  return {
    object: 'role',
    key: row.key,
    name: row.name,
    permissions: JSON.parse(row.permissions) as string[],
    built_in: false,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

import type { FastifyReply } from 'fastify';
import { type BrowserAccess, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { RolesService } from './roles.service.js';
import {
  CreateRoleBody,
  DeletedRoleSchema,
  DeletedUserSchema,
  IdentityParams,
  ListUsersQuery,
  RoleListSchema,
  RoleParams,
  RoleSchema,
  UpdateRoleBody,
  UpdateUserBody,
  UserListSchema,
  UserParams,
  UserSchema,
  UserWithIdentitiesSchema,
} from './users.schemas.js';
import type { UsersService } from './users.service.js';

/** HTTP only: `/v1/users*` and `/v1/roles*`. */
export function usersRoutes(users: UsersService, roles: RolesService, options: { browser: BrowserAccess }): RouteModule {
  return routeModule('users', [
    defineRoute({
      method: 'GET',
      url: '/v1/users/me',
      credential: 'session',
      operationId: 'getCurrentUser',
      summary: "The session's user",
      description: 'The user of the presented session token.',
      response: { 200: UserSchema },
      browser: options.browser,
      handler: (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'session') throw new Error('GET /v1/users/me ran without a session principal');
        return users.get(principal.projectId, principal.userId);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/v1/users',
      credential: 'secret',
      operationId: 'listUsers',
      summary: 'List users, newest first; `?email=` finds one by address',
      description:
        'The users of the project, newest first; `email` finds the one with that address. Paged with `limit` and `starting_after`.',
      querystring: ListUsersQuery,
      response: { 200: UserListSchema },
      handler: (request) => users.list(requireSecretKey(request).projectId, request.query),
    }),

    defineRoute({
      method: 'GET',
      url: '/v1/users/:id',
      credential: 'secret',
      operationId: 'getUser',
      summary: 'Retrieve a user, with the provider accounts linked to it',
      description: 'A user of the project, with the provider accounts (OAuth, OpenID Connect, SSO) linked to it.',
      params: UserParams,
      response: { 200: UserWithIdentitiesSchema },
      handler: (request) => users.getWithIdentities(requireSecretKey(request).projectId, request.params.id),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/v1/users/:id/identities/:provider',
      credential: 'secret',
      operationId: 'unlinkUserIdentity',
      summary: 'Unlink a provider account; refused when it is the last way the user can sign in',
      description:
        "Unlinks a provider account from a user. Refused with 409 `identity_last_sign_in_method` when it is the user's only way to sign in.",
      errors: ['identity_last_sign_in_method'],
      params: IdentityParams,
      response: { 200: UserWithIdentitiesSchema },
      handler: (request) =>
        users.unlinkIdentity(requireSecretKey(request).projectId, request.params.id, request.params.provider, auditContext(request)),
    }),

    defineRoute({
      method: 'PATCH',
      url: '/v1/users/:id',
      credential: 'secret',
      operationId: 'updateUser',
      summary: "Update a user's name, metadata or roles",
      description: "Changes a user's `name`, `metadata` or `roles` (the list given replaces the user's roles).",
      errors: ['email_taken'],
      params: UserParams,
      body: UpdateUserBody,
      response: { 200: UserSchema },
      handler: (request) => users.update(requireSecretKey(request).projectId, request.params.id, request.body, auditContext(request)),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/v1/users/:id',
      credential: 'secret',
      operationId: 'deleteUser',
      summary: 'Delete a user; its sessions are revoked',
      description: 'Deletes a user; their sessions are revoked. Emits `user.deleted`.',
      params: UserParams,
      response: { 200: DeletedUserSchema },
      handler: (request) => users.delete(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),

    defineRoute({
      method: 'POST',
      url: '/v1/users/:id/ban',
      credential: 'secret',
      operationId: 'banUser',
      summary: 'Ban a user: no log in, every session revoked',
      description:
        'Bans a user: every session is revoked at once and every sign-in is refused with 403 `user_banned` until the ban is lifted.',
      params: UserParams,
      response: { 200: UserSchema },
      handler: (request) => users.ban(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),

    defineRoute({
      method: 'POST',
      url: '/v1/users/:id/unban',
      credential: 'secret',
      operationId: 'unbanUser',
      summary: 'Lift a ban',
      description: 'Lifts a ban: the user can sign in again. Sessions revoked by the ban stay revoked.',
      params: UserParams,
      response: { 200: UserSchema },
      handler: (request) => users.unban(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),

    defineRoute({
      method: 'POST',
      url: '/v1/roles',
      credential: 'secret',
      operationId: 'createRole',
      summary: 'Create a role with permissions',
      description:
        'Creates a custom role: a `key`, a `name` and the permissions it grants, which organization memberships and users can then carry. `owner`, `admin` and `member` are built in.',
      errors: ['role_key_taken'],
      tags: ['roles'],
      body: CreateRoleBody,
      response: { 201: RoleSchema },
      handler: async (request, reply: FastifyReply) => {
        const role = await roles.create(requireSecretKey(request).projectId, request.body, auditContext(request));
        return reply.code(201).send(role);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/v1/roles',
      credential: 'secret',
      operationId: 'listRoles',
      summary: 'Every role: custom ones newest first, then the built-in ones',
      description: "The project's roles, in one page: custom ones newest first, then the built-in `owner`, `admin` and `member`.",
      tags: ['roles'],
      response: { 200: RoleListSchema },
      handler: (request) => roles.list(requireSecretKey(request).projectId),
    }),

    defineRoute({
      method: 'GET',
      url: '/v1/roles/:key',
      credential: 'secret',
      operationId: 'getRole',
      summary: 'Retrieve a role',
      description: 'A role with its permissions; built-in roles have `built_in: true`.',
      tags: ['roles'],
      params: RoleParams,
      response: { 200: RoleSchema },
      handler: (request) => roles.get(requireSecretKey(request).projectId, request.params.key),
    }),

    defineRoute({
      method: 'PATCH',
      url: '/v1/roles/:key',
      credential: 'secret',
      operationId: 'updateRole',
      summary: "Change a custom role's name or permissions",
      description:
        "Changes a custom role's `name` or `permissions`; permission checks read them at once. Built-in roles cannot be changed (400 `parameter_invalid`).",
      tags: ['roles'],
      params: RoleParams,
      body: UpdateRoleBody,
      response: { 200: RoleSchema },
      handler: (request) => roles.update(requireSecretKey(request).projectId, request.params.key, request.body, auditContext(request)),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/v1/roles/:key',
      credential: 'secret',
      operationId: 'deleteRole',
      summary: 'Delete a custom role; users lose it',
      description: 'Deletes a custom role; users that had it lose it. Built-in roles cannot be deleted (400 `parameter_invalid`).',
      tags: ['roles'],
      params: RoleParams,
      response: { 200: DeletedRoleSchema },
      handler: (request) => roles.delete(requireSecretKey(request).projectId, request.params.key, auditContext(request)),
    }),
  ]);
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserAccess, RouteModule } from '../../lib/routes.js';
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

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];

type WithId = FastifyRequest<{ Params: { id: string } }>;
type WithKey = FastifyRequest<{ Params: { key: string } }>;

/** HTTP only: `/v1/users*` and `/v1/roles*`. */
export function usersRoutes(users: UsersService, roles: RolesService, options: { browser: BrowserAccess }): RouteModule {
  return (app: FastifyInstance) => {
    const tags = ['users'];

    app.get(
      '/v1/users/me',
      {
        config: { credential: 'session' },
        onSend: options.browser.onSend,
        schema: {
          operationId: 'getCurrentUser',
          description: 'The user of the presented session token.',
          tags,
          security: [{ sessionToken: [] }],
          summary: "The session's user",
          response: { 200: UserSchema },
        },
      },
      (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'session') throw new Error('GET /v1/users/me ran without a session principal');
        return users.get(principal.projectId, principal.userId);
      },
    );
    options.browser.preflight(app, '/v1/users/me', ['GET']);

    app.get(
      '/v1/users',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listUsers',
          description:
            'The users of the project, newest first; `email` finds the one with that address. Paged with `limit` and `starting_after`.',
          tags,
          security,
          summary: 'List users, newest first; `?email=` finds one by address',
          querystring: ListUsersQuery,
          response: { 200: UserListSchema },
        },
      },
      (request) => users.list(requireSecretKey(request).projectId, request.query as ListUsersQuery),
    );

    app.get(
      '/v1/users/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getUser',
          description: 'A user of the project, with the provider accounts (OAuth, OpenID Connect, SSO) linked to it.',
          tags,
          security,
          summary: 'Retrieve a user, with the provider accounts linked to it',
          params: UserParams,
          response: { 200: UserWithIdentitiesSchema },
        },
      },
      (request: WithId) => users.getWithIdentities(requireSecretKey(request).projectId, request.params.id),
    );

    app.delete(
      '/v1/users/:id/identities/:provider',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'unlinkUserIdentity',
          description:
            "Unlinks a provider account from a user. Refused with 409 `identity_last_sign_in_method` when it is the user's only way to sign in.",
          errors: ['identity_last_sign_in_method'],
          tags,
          security,
          summary: 'Unlink a provider account; refused when it is the last way the user can sign in',
          params: IdentityParams,
          response: { 200: UserWithIdentitiesSchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string; provider: string } }>) =>
        users.unlinkIdentity(requireSecretKey(request).projectId, request.params.id, request.params.provider, auditContext(request)),
    );

    app.patch(
      '/v1/users/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'updateUser',
          description: "Changes a user's `name`, `metadata` or `roles` (the list given replaces the user's roles).",
          errors: ['email_taken'],
          tags,
          security,
          summary: "Update a user's name, metadata or roles",
          params: UserParams,
          body: UpdateUserBody,
          response: { 200: UserSchema },
        },
      },
      (request: WithId) =>
        users.update(requireSecretKey(request).projectId, request.params.id, request.body as UpdateUserBody, auditContext(request)),
    );

    app.delete(
      '/v1/users/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'deleteUser',
          description: 'Deletes a user; their sessions are revoked. Emits `user.deleted`.',
          tags,
          security,
          summary: 'Delete a user; its sessions are revoked',
          params: UserParams,
          response: { 200: DeletedUserSchema },
        },
      },
      (request: WithId) => users.delete(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    app.post(
      '/v1/users/:id/ban',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'banUser',
          description:
            'Bans a user: every session is revoked at once and every sign-in is refused with 403 `user_banned` until the ban is lifted.',
          tags,
          security,
          summary: 'Ban a user: no log in, every session revoked',
          params: UserParams,
          response: { 200: UserSchema },
        },
      },
      (request: WithId) => users.ban(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    app.post(
      '/v1/users/:id/unban',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'unbanUser',
          description: 'Lifts a ban: the user can sign in again. Sessions revoked by the ban stay revoked.',
          tags,
          security,
          summary: 'Lift a ban',
          params: UserParams,
          response: { 200: UserSchema },
        },
      },
      (request: WithId) => users.unban(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    const roleTags = ['roles'];

    app.post(
      '/v1/roles',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'createRole',
          description:
            'Creates a custom role: a `key`, a `name` and the permissions it grants, which organization memberships and users can then carry. `owner`, `admin` and `member` are built in.',
          errors: ['role_key_taken'],
          tags: roleTags,
          security,
          summary: 'Create a role with permissions',
          body: CreateRoleBody,
          response: { 201: RoleSchema },
        },
      },
      async (request, reply: FastifyReply) => {
        const role = await roles.create(requireSecretKey(request).projectId, request.body as CreateRoleBody, auditContext(request));
        return reply.code(201).send(role);
      },
    );

    app.get(
      '/v1/roles',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listRoles',
          description: "The project's roles, in one page: custom ones newest first, then the built-in `owner`, `admin` and `member`.",
          tags: roleTags,
          security,
          summary: 'Every role: custom ones newest first, then the built-in ones',
          response: { 200: RoleListSchema },
        },
      },
      (request) => roles.list(requireSecretKey(request).projectId),
    );

    app.get(
      '/v1/roles/:key',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getRole',
          description: 'A role with its permissions; built-in roles have `built_in: true`.',
          tags: roleTags,
          security,
          summary: 'Retrieve a role',
          params: RoleParams,
          response: { 200: RoleSchema },
        },
      },
      (request: WithKey) => roles.get(requireSecretKey(request).projectId, request.params.key),
    );

    app.patch(
      '/v1/roles/:key',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'updateRole',
          description:
            "Changes a custom role's `name` or `permissions`; permission checks read them at once. Built-in roles cannot be changed (400 `parameter_invalid`).",
          tags: roleTags,
          security,
          summary: "Change a custom role's name or permissions",
          params: RoleParams,
          body: UpdateRoleBody,
          response: { 200: RoleSchema },
        },
      },
      (request: WithKey) =>
        roles.update(requireSecretKey(request).projectId, request.params.key, request.body as UpdateRoleBody, auditContext(request)),
    );

    app.delete(
      '/v1/roles/:key',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'deleteRole',
          description: 'Deletes a custom role; users that had it lose it. Built-in roles cannot be deleted (400 `parameter_invalid`).',
          tags: roleTags,
          security,
          summary: 'Delete a custom role; users lose it',
          params: RoleParams,
          response: { 200: DeletedRoleSchema },
        },
      },
      (request: WithKey) => roles.delete(requireSecretKey(request).projectId, request.params.key, auditContext(request)),
    );
  };
}

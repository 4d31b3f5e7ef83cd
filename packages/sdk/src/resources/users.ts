import { type Api, byId } from '../api.js';
import type { PagedList } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  CreateRoleParams,
  DeletedRole,
  DeletedUser,
  ListUserSessionsParams,
  ListUsersParams,
  MfaStatus,
  RevokedSessions,
  Role,
  Session,
  UpdateRoleParams,
  UpdateUserParams,
  User,
} from '../types.js';

/** `/v1/users*` with the secret key. */
export class Users {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** Newest first; `{ email }` finds the user with that address. */
  list(params: ListUsersParams = {}, options?: RequestOptions): PagedList<User> {
    return this.#api.list('GET /v1/users', { query: params }, options, byId);
  }

  get(id: string, options?: RequestOptions): Promise<User> {
    return this.#api.call('GET /v1/users/{id}', { path: { id } }, options);
  }

  /** `name`, `metadata`, `roles`. */
  update(id: string, params: UpdateUserParams, options?: RequestOptions): Promise<User> {
    return this.#api.call('PATCH /v1/users/{id}', { path: { id }, body: params }, options);
  }

  /** Deletes the user and revokes their sessions → `{ id, object: 'user', deleted: true }`. */
  delete(id: string, options?: RequestOptions): Promise<DeletedUser> {
    return this.#api.call('DELETE /v1/users/{id}', { path: { id } }, options);
  }

  /** A banned user cannot log in (403 `user_banned`) and loses every session. */
  ban(id: string, options?: RequestOptions): Promise<User> {
    return this.#api.call('POST /v1/users/{id}/ban', { path: { id } }, options);
  }

  unban(id: string, options?: RequestOptions): Promise<User> {
    return this.#api.call('POST /v1/users/{id}/unban', { path: { id } }, options);
  }

  /** The user's second factors: `{ totp: { status, activated_at }, recovery_codes_left, methods }`. */
  getMfa(id: string, options?: RequestOptions): Promise<MfaStatus> {
    return this.#api.call('GET /v1/users/{id}/mfa', { path: { id } }, options);
  }

  /** Resets the user's second factors (a lost phone) → event `user.mfa.disabled`, `by: 'administrator'`. */
  resetMfa(id: string, options?: RequestOptions): Promise<MfaStatus> {
    return this.#api.call('DELETE /v1/users/{id}/mfa', { path: { id } }, options);
  }

  /** The user's sessions that can still be used or refreshed, newest first. */
  sessions(id: string, params: ListUserSessionsParams = {}, options?: RequestOptions): PagedList<Session> {
    return this.#api.list('GET /v1/users/{id}/sessions', { path: { id }, query: params }, options, byId);
  }

  /** Revokes every session of the user → the sessions this call revoked. */
  revokeSessions(id: string, options?: RequestOptions): Promise<RevokedSessions> {
    return this.#api.call('POST /v1/users/{id}/sessions/revoke', { path: { id } }, options);
  }

  /** `GET /v1/users/me`: the user holding `sessionToken`. Same as `client.withSession(token).users.me()`. */
  me(sessionToken: string, options?: RequestOptions): Promise<User> {
    return this.#api.withSession(sessionToken).call('GET /v1/users/me', {}, options);
  }
}

/** `/v1/roles*`: custom roles with permissions beside the built-in `owner`, `admin` and `member`. */
export class Roles {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  create(params: CreateRoleParams, options?: RequestOptions): Promise<Role> {
    return this.#api.call('POST /v1/roles', { body: params }, options);
  }

  /** Every role: custom ones newest first, then the built-in ones (one page). */
  list(options?: RequestOptions): PagedList<Role> {
    return this.#api.list('GET /v1/roles', {}, options, (role: Role) => role.key);
  }

  get(key: string, options?: RequestOptions): Promise<Role> {
    return this.#api.call('GET /v1/roles/{key}', { path: { key } }, options);
  }

  update(key: string, params: UpdateRoleParams, options?: RequestOptions): Promise<Role> {
    return this.#api.call('PATCH /v1/roles/{key}', { path: { key }, body: params }, options);
  }

  /** Deletes a custom role; users lose it. */
  delete(key: string, options?: RequestOptions): Promise<DeletedRole> {
    return this.#api.call('DELETE /v1/roles/{key}', { path: { key } }, options);
  }
}

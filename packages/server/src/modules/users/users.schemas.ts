import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';

export const METADATA_KEYS_MAX = 50;
export const METADATA_KEY_LENGTH_MAX = 40;
export const METADATA_VALUE_LENGTH_MAX = 500;
export const NAME_LENGTH_MAX = 200;
export const ROLES_PER_USER_MAX = 50;
export const PERMISSIONS_PER_ROLE_MAX = 100;
/** Custom roles per project; with the three built-in ones a role list always fits one page. */
export const CUSTOM_ROLES_MAX = 97;

/**
 * Written out rather than `Type.Record`, whose key pattern `^(.*)$` lets a key with a line break
 * through unchecked (the same shape as a wallet's metadata).
 */
export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description: `Free-form key/value pairs. Up to ${METADATA_KEYS_MAX} keys of 1 to ${METADATA_KEY_LENGTH_MAX} characters, each a string of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
});
const Time = Type.String({ format: 'date-time' });
export const UserId = Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `usr_`.' });
export const RoleKey = Type.String({
  pattern: '^[a-z][a-z0-9_:-]{0,63}$',
  description: 'Lower-case letters, digits, `_`, `:` and `-`, starting with a letter; at most 64 characters.',
});
const Permission = Type.String({ pattern: '^[A-Za-z0-9_.:*-]{1,100}$', description: 'e.g. `wallets:read`, or `*` for every permission.' });

// ---- Users -----------------------------------------------------------------------------------

export const UserSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `usr_`.' }),
    object: Type.Literal('user'),
    email: Type.String(),
    name: Type.String(),
    email_verified: Type.Boolean(),
    roles: Type.Array(Type.String(), { description: 'Role keys.' }),
    metadata: Type.Record(Type.String(), Type.String()),
    banned: Type.Boolean(),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'User' },
);
export type User = Static<typeof UserSchema>;

/** A provider account linked to the user: which provider and its subject, never a token. */
export const IdentitySchema = Type.Object(
  {
    object: Type.Literal('identity'),
    provider: Type.String({ description: '`google`, `github`, `apple`, or a generic OpenID Connect provider key.' }),
    subject: Type.String({ description: "The provider's stable id of the account (`sub`, or GitHub's numeric id)." }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'The email the provider gave at the last sign-in.' }),
    created_at: Time,
    last_used_at: Time,
  },
  { $id: 'Identity' },
);
export type Identity = Static<typeof IdentitySchema>;

/** `GET /v1/users/{id}`: the user and the provider accounts linked to it. */
export const UserWithIdentitiesSchema = Type.Object(
  { ...UserSchema.properties, identities: Type.Array(IdentitySchema) },
  { $id: 'UserWithIdentities' },
);
export type UserWithIdentities = Static<typeof UserWithIdentitiesSchema>;

export const IdentityParams = StrictObject({
  id: UserId,
  provider: Type.String({ minLength: 1, maxLength: 64 }),
});

export const UserListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(UserSchema), has_more: Type.Boolean() },
  { $id: 'UserList' },
);

export const DeletedUserSchema = Type.Object(
  { id: Type.String(), object: Type.Literal('user'), deleted: Type.Literal(true) },
  { $id: 'DeletedUser' },
);

export const UserParams = StrictObject({ id: UserId });

export const ListUsersQuery = StrictObject({
  ...ListQuery,
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'Exact address, compared case-insensitively.' })),
});
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const UpdateUserBody = StrictObject({
  name: Type.Optional(Type.String({ maxLength: NAME_LENGTH_MAX })),
  metadata: Type.Optional(Metadata),
  roles: Type.Optional(Type.Array(RoleKey, { maxItems: ROLES_PER_USER_MAX, uniqueItems: true, description: 'Replaces the role list.' })),
});
export type UpdateUserBody = Static<typeof UpdateUserBody>;

// ---- Roles -----------------------------------------------------------------------------------

export const RoleSchema = Type.Object(
  {
    object: Type.Literal('role'),
    key: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.String()),
    built_in: Type.Boolean({ description: '`owner`, `admin` and `member` exist in every project and cannot be changed.' }),
    created_at: Type.Union([Time, Type.Null()]),
    updated_at: Type.Union([Time, Type.Null()]),
  },
  { $id: 'Role' },
);
export type Role = Static<typeof RoleSchema>;

export const RoleListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(RoleSchema), has_more: Type.Boolean() },
  { $id: 'RoleList' },
);

export const RoleParams = StrictObject({ key: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateRoleBody = StrictObject({
  key: RoleKey,
  name: Type.String({ minLength: 1, maxLength: NAME_LENGTH_MAX }),
  permissions: Type.Array(Permission, { maxItems: PERMISSIONS_PER_ROLE_MAX, uniqueItems: true }),
});
export type CreateRoleBody = Static<typeof CreateRoleBody>;

export const UpdateRoleBody = StrictObject({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_LENGTH_MAX })),
  permissions: Type.Optional(Type.Array(Permission, { maxItems: PERMISSIONS_PER_ROLE_MAX, uniqueItems: true })),
});
export type UpdateRoleBody = Static<typeof UpdateRoleBody>;

export const DeletedRoleSchema = Type.Object(
  { key: Type.String(), object: Type.Literal('role'), deleted: Type.Literal(true) },
  { $id: 'DeletedRole' },
);

import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { Metadata, NAME_LENGTH_MAX, RoleKey, UserId } from '../users/users.schemas.js';

export const SLUG_LENGTH_MAX = 64;
export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

const Time = Type.String({ format: 'date-time' });
const Slug = Type.String({
  minLength: 1,
  maxLength: SLUG_LENGTH_MAX,
  pattern: SLUG_PATTERN,
  description: `Lower-case letters and digits in groups joined by single hyphens, at most ${SLUG_LENGTH_MAX} characters; unique in the project.`,
});
const Name = Type.String({ minLength: 1, maxLength: NAME_LENGTH_MAX, pattern: '\\S' });
const OrganizationId = Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `org_`.' });
const InvitationId = Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `inv_`.' });

// ---- Organizations ---------------------------------------------------------------------------

export const OrganizationSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `org_`.' }),
    object: Type.Literal('organization'),
    name: Type.String(),
    slug: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Organization' },
);
export type Organization = Static<typeof OrganizationSchema>;

export const OrganizationListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(OrganizationSchema), has_more: Type.Boolean() },
  { $id: 'OrganizationList' },
);
export type OrganizationList = Static<typeof OrganizationListSchema>;

export const DeletedOrganizationSchema = Type.Object(
  { id: Type.String(), object: Type.Literal('organization'), deleted: Type.Literal(true) },
  { $id: 'DeletedOrganization' },
);

export const OrganizationParams = StrictObject({ id: OrganizationId });
export const PageQuery = StrictObject({ ...ListQuery });
export type PageQuery = Static<typeof PageQuery>;

export const CreateOrganizationBody = StrictObject({
  name: Name,
  slug: Type.Optional(Slug),
  metadata: Type.Optional(Metadata),
});
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const UpdateOrganizationBody = StrictObject({
  name: Type.Optional(Name),
  slug: Type.Optional(Slug),
  metadata: Type.Optional(Metadata),
});
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

// ---- Members ---------------------------------------------------------------------------------

export const MembershipSchema = Type.Object(
  {
    object: Type.Literal('organization_membership'),
    organization_id: Type.String(),
    user_id: Type.String(),
    role: Type.String({ description: "The key of one of the project's roles." }),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'OrganizationMembership' },
);
export type Membership = Static<typeof MembershipSchema>;

export const MembershipListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(MembershipSchema), has_more: Type.Boolean() },
  { $id: 'OrganizationMembershipList' },
);
export type MembershipList = Static<typeof MembershipListSchema>;

/** A membership with its organization: what the session user sees of their own memberships. */
export const UserMembershipSchema = Type.Object(
  { ...MembershipSchema.properties, organization: OrganizationSchema },
  { $id: 'UserOrganizationMembership' },
);
export type UserMembership = Static<typeof UserMembershipSchema>;

export const UserMembershipListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(UserMembershipSchema), has_more: Type.Boolean() },
  { $id: 'UserOrganizationMembershipList' },
);
export type UserMembershipList = Static<typeof UserMembershipListSchema>;

export const DeletedMembershipSchema = Type.Object(
  {
    object: Type.Literal('organization_membership'),
    organization_id: Type.String(),
    user_id: Type.String(),
    deleted: Type.Literal(true),
  },
  { $id: 'DeletedOrganizationMembership' },
);

export const MemberParams = StrictObject({ id: OrganizationId, user_id: UserId });
/** `starting_after` is a member's user id. */
export const ListMembersQuery = PageQuery;

export const AddMemberBody = StrictObject({
  user_id: UserId,
  role: Type.Optional(RoleKey),
});
export type AddMemberBody = Static<typeof AddMemberBody>;

export const UpdateMemberBody = StrictObject({ role: RoleKey });
export type UpdateMemberBody = Static<typeof UpdateMemberBody>;

export const AuthorizeBody = StrictObject({
  user_id: UserId,
  permission: Type.String({ pattern: '^[A-Za-z0-9_.:*-]{1,100}$', description: 'e.g. `invoices:read`.' }),
});
export type AuthorizeBody = Static<typeof AuthorizeBody>;

export const AuthorizationSchema = Type.Object(
  {
    allowed: Type.Boolean(),
    role: Type.Union([Type.String(), Type.Null()], { description: "The user's role in the organization; null when not a member." }),
  },
  { $id: 'OrganizationAuthorization' },
);
export type Authorization = Static<typeof AuthorizationSchema>;

// ---- Invitations -----------------------------------------------------------------------------

export const InvitationSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `inv_`.' }),
    object: Type.Literal('invitation'),
    organization_id: Type.String(),
    email: Type.String(),
    role: Type.String(),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('accepted'),
      Type.Literal('revoked'),
      Type.Literal('replaced'),
      Type.Literal('expired'),
    ]),
    expires_at: Time,
    accepted_at: Type.Union([Time, Type.Null()]),
    accepted_user_id: Type.Union([Type.String(), Type.Null()]),
    revoked_at: Type.Union([Time, Type.Null()]),
    created_at: Time,
  },
  { $id: 'Invitation' },
);
export type Invitation = Static<typeof InvitationSchema>;

export const InvitationListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(InvitationSchema), has_more: Type.Boolean() },
  { $id: 'InvitationList' },
);
export type InvitationList = Static<typeof InvitationListSchema>;

export const InvitationParams = StrictObject({ id: OrganizationId, invitation_id: InvitationId });

export const CreateInvitationBody = StrictObject({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  role: Type.Optional(RoleKey),
});
export type CreateInvitationBody = Static<typeof CreateInvitationBody>;

export const AcceptInvitationBody = StrictObject({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token from the invitation email.' }),
});
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>;

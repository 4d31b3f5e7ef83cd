import type { FastifyReply, FastifyRequest } from 'fastify';
import { type BrowserAccess, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { type Principal, requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { InvitationsService } from './invitations.service.js';
import {
  AcceptInvitationBody,
  AddMemberBody,
  AuthorizationSchema,
  AuthorizeBody,
  CreateInvitationBody,
  CreateOrganizationBody,
  DeletedMembershipSchema,
  DeletedOrganizationSchema,
  InvitationListSchema,
  InvitationParams,
  InvitationSchema,
  MemberParams,
  MembershipListSchema,
  MembershipSchema,
  OrganizationListSchema,
  OrganizationParams,
  OrganizationSchema,
  PageQuery,
  UpdateMemberBody,
  UpdateOrganizationBody,
  UserMembershipListSchema,
  UserMembershipSchema,
} from './organizations.schemas.js';
import type { OrganizationsService } from './organizations.service.js';

function sessionOf(request: { principal: Principal | undefined }, route: string): Extract<Principal, { kind: 'session' }> {
  const principal = request.principal;
  if (principal?.kind !== 'session') throw new Error(`${route} ran without a session principal`);
  return principal;
}

export interface OrganizationsRoutesOptions {
  readonly organizations: OrganizationsService;
  readonly invitations: InvitationsService;
  readonly browser: BrowserAccess;
}

/** HTTP only: `/v1/organizations*`, `/v1/invitations/accept` and `/v1/users/me/organizations`. */
export function organizationsRoutes(options: OrganizationsRoutesOptions): RouteModule {
  const { organizations, invitations, browser } = options;
  return routeModule('organizations', [
    defineRoute({
      method: 'POST',
      url: '/v1/organizations',
      credential: 'secret',
      operationId: 'createOrganization',
      summary: 'Create an organization; the slug is derived from the name when absent',
      description:
        'Creates an organization; its `slug` is derived from the name when none is given, and one another organization of the project has is 409 `organization_slug_taken`.',
      errors: ['organization_slug_taken'],
      body: CreateOrganizationBody,
      response: { 201: OrganizationSchema },
      handler: async (request, reply: FastifyReply) => {
        const organization = await organizations.create(requireSecretKey(request).projectId, request.body, auditContext(request));
        return reply.code(201).send(organization);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations',
      credential: 'secret',
      operationId: 'listOrganizations',
      summary: 'List organizations, newest first',
      description: 'The organizations of the project, newest first. Paged with `limit` and `starting_after`.',
      querystring: PageQuery,
      response: { 200: OrganizationListSchema },
      handler: (request) => organizations.list(requireSecretKey(request).projectId, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id',
      credential: 'secret',
      operationId: 'getOrganization',
      summary: 'Retrieve an organization',
      description: 'An organization of the project.',
      params: OrganizationParams,
      response: { 200: OrganizationSchema },
      handler: (request) => organizations.get(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/organizations/:id',
      credential: 'secret',
      operationId: 'updateOrganization',
      summary: "Change an organization's name, slug or metadata",
      description: "Changes an organization's `name`, `slug` or `metadata`.",
      errors: ['organization_slug_taken'],
      params: OrganizationParams,
      body: UpdateOrganizationBody,
      response: { 200: OrganizationSchema },
      handler: (request) =>
        organizations.update(requireSecretKey(request).projectId, request.params.id, request.body, auditContext(request)),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/organizations/:id',
      credential: 'secret',
      operationId: 'deleteOrganization',
      summary: 'Delete an organization with its memberships and invitations',
      description: 'Deletes an organization with its memberships and invitations.',
      params: OrganizationParams,
      response: { 200: DeletedOrganizationSchema },
      handler: (request) => organizations.delete(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id/members',
      credential: 'secret',
      operationId: 'listOrganizationMembers',
      summary: 'List the members, newest first; `starting_after` is a user id',
      description: "The organization's members with their roles, newest first; `starting_after` is a user id.",
      params: OrganizationParams,
      querystring: PageQuery,
      response: { 200: MembershipListSchema },
      handler: (request) => organizations.listMembers(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/members',
      credential: 'secret',
      operationId: 'addOrganizationMember',
      summary: 'Add a user of the project as a member with a role (default `member`)',
      description: 'Adds a user of the project to the organization with a role (default `member`); a user who is a member already is 409.',
      errors: ['organization_member_exists'],
      params: OrganizationParams,
      body: AddMemberBody,
      response: { 201: MembershipSchema },
      handler: async (request, reply: FastifyReply) => {
        const member = await organizations.addMember(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body,
          auditContext(request),
        );
        return reply.code(201).send(member);
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/organizations/:id/members/:user_id',
      credential: 'secret',
      operationId: 'updateOrganizationMember',
      summary: "Change a member's role; the last owner cannot be demoted",
      description: "Changes a member's role. The last `owner` cannot be demoted, so an organization always keeps one.",
      errors: ['organization_owner_required'],
      params: MemberParams,
      body: UpdateMemberBody,
      response: { 200: MembershipSchema },
      handler: (request) =>
        organizations.updateMember(
          requireSecretKey(request).projectId,
          request.params.id,
          request.params.user_id,
          request.body,
          auditContext(request),
        ),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/organizations/:id/members/:user_id',
      credential: 'secret',
      operationId: 'removeOrganizationMember',
      summary: 'Remove a member; the last owner cannot be removed',
      description: 'Removes a member from the organization. The last `owner` cannot be removed.',
      errors: ['organization_owner_required'],
      params: MemberParams,
      response: { 200: DeletedMembershipSchema },
      handler: (request) =>
        organizations.removeMember(requireSecretKey(request).projectId, request.params.id, request.params.user_id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/authorize',
      credential: 'secret',
      operationId: 'checkOrganizationPermission',
      summary: "Whether a user's role in the organization grants a permission, read from the database on every call",
      description:
        "Whether the user's role in the organization grants the permission, read from the database on every call, so a change of role or of the role's permissions counts at once. A user who is not a member gets `{allowed: false, role: null}`.",
      params: OrganizationParams,
      body: AuthorizeBody,
      response: { 200: AuthorizationSchema },
      handler: (request) => organizations.authorize(requireSecretKey(request).projectId, request.params.id, request.body),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/invitations',
      credential: 'secret',
      operationId: 'createOrganizationInvitation',
      summary: 'Invite an email address with a role; sends the invitation email. Replaces a pending invitation of the same address',
      description:
        'Invites an email address to the organization with a role and sends the invitation email with a single-use token. A pending invitation of the same address is replaced.',
      errors: ['organization_member_exists'],
      params: OrganizationParams,
      body: CreateInvitationBody,
      response: { 201: InvitationSchema },
      handler: async (request, reply: FastifyReply) => {
        const invitation = await invitations.create(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body,
          auditContext(request),
        );
        return reply.code(201).send(invitation);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id/invitations',
      credential: 'secret',
      operationId: 'listOrganizationInvitations',
      summary: 'List the invitations, newest first, whatever their status',
      description:
        "The organization's invitations, newest first, whatever their status (`pending`, `accepted`, `revoked`, `replaced`, `expired`).",
      params: OrganizationParams,
      querystring: PageQuery,
      response: { 200: InvitationListSchema },
      handler: (request) => invitations.list(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/organizations/:id/invitations/:invitation_id',
      credential: 'secret',
      operationId: 'revokeOrganizationInvitation',
      summary: 'Revoke a pending invitation; its token stops working',
      description: 'Revokes a pending invitation: its token stops working.',
      errors: ['invitation_not_pending'],
      params: InvitationParams,
      response: { 200: InvitationSchema },
      handler: (request) =>
        invitations.revoke(requireSecretKey(request).projectId, request.params.id, request.params.invitation_id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/invitations/accept',
      credential: 'session',
      // Idempotency keys of end users are kept per user, so two users' keys never meet.
      idempotency: {
        scope: (request: FastifyRequest) => `user:${request.principal?.kind === 'session' ? request.principal.userId : ''}`,
      },
      operationId: 'acceptInvitation',
      summary: "Accept an invitation: the session user's verified email must be the invited address",
      description:
        "Accepts an invitation with its token: the session user becomes a member with the invited role. The user's verified email must be the invited address (403 otherwise).",
      errors: ['token_invalid', 'token_expired', 'invitation_not_pending', 'invitation_email_mismatch', 'organization_member_exists'],
      body: AcceptInvitationBody,
      response: { 200: UserMembershipSchema },
      browser,
      handler: (request) => {
        const principal = sessionOf(request, 'POST /v1/invitations/accept');
        return invitations.accept(principal.projectId, principal.userId, request.body.token, auditContext(request));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/users/me/organizations',
      credential: 'session',
      operationId: 'listCurrentUserOrganizations',
      summary: "The session user's memberships, newest first, each with its organization; `starting_after` is an organization id",
      description: "The session user's memberships, newest first, each with its organization; `starting_after` is an organization id.",
      querystring: PageQuery,
      response: { 200: UserMembershipListSchema },
      browser,
      handler: (request) => {
        const principal = sessionOf(request, 'GET /v1/users/me/organizations');
        return organizations.listUserMemberships(principal.projectId, principal.userId, request.query);
      },
    }),
  ]);
}

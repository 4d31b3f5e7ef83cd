import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserAccess, RouteModule } from '../../lib/routes.js';
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

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const sessionSecurity = [{ sessionToken: [] }];
const tags = ['organizations'];
const config = { credential: 'secret' } as const;

type WithOrganization = FastifyRequest<{ Params: { id: string } }>;
type WithMember = FastifyRequest<{ Params: { id: string; user_id: string } }>;
type WithInvitation = FastifyRequest<{ Params: { id: string; invitation_id: string } }>;

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
  return (app: FastifyInstance) => {
    app.post(
      '/v1/organizations',
      {
        config,
        schema: {
          operationId: 'createOrganization',
          description:
            'Creates an organization; its `slug` is derived from the name when none is given, and one another organization of the project has is 409 `organization_slug_taken`.',
          errors: ['organization_slug_taken'],
          tags,
          security,
          summary: 'Create an organization; the slug is derived from the name when absent',
          body: CreateOrganizationBody,
          response: { 201: OrganizationSchema },
        },
      },
      async (request, reply: FastifyReply) => {
        const organization = await organizations.create(
          requireSecretKey(request).projectId,
          request.body as CreateOrganizationBody,
          auditContext(request),
        );
        return reply.code(201).send(organization);
      },
    );

    app.get(
      '/v1/organizations',
      {
        config,
        schema: {
          operationId: 'listOrganizations',
          description: 'The organizations of the project, newest first. Paged with `limit` and `starting_after`.',
          tags,
          security,
          summary: 'List organizations, newest first',
          querystring: PageQuery,
          response: { 200: OrganizationListSchema },
        },
      },
      (request) => organizations.list(requireSecretKey(request).projectId, request.query as PageQuery),
    );

    app.get(
      '/v1/organizations/:id',
      {
        config,
        schema: {
          operationId: 'getOrganization',
          description: 'An organization of the project.',
          tags,
          security,
          summary: 'Retrieve an organization',
          params: OrganizationParams,
          response: { 200: OrganizationSchema },
        },
      },
      (request: WithOrganization) => organizations.get(requireSecretKey(request).projectId, request.params.id),
    );

    app.patch(
      '/v1/organizations/:id',
      {
        config,
        schema: {
          operationId: 'updateOrganization',
          description: "Changes an organization's `name`, `slug` or `metadata`.",
          errors: ['organization_slug_taken'],
          tags,
          security,
          summary: "Change an organization's name, slug or metadata",
          params: OrganizationParams,
          body: UpdateOrganizationBody,
          response: { 200: OrganizationSchema },
        },
      },
      (request: WithOrganization) =>
        organizations.update(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as UpdateOrganizationBody,
          auditContext(request),
        ),
    );

    app.delete(
      '/v1/organizations/:id',
      {
        config,
        schema: {
          operationId: 'deleteOrganization',
          description: 'Deletes an organization with its memberships and invitations.',
          tags,
          security,
          summary: 'Delete an organization with its memberships and invitations',
          params: OrganizationParams,
          response: { 200: DeletedOrganizationSchema },
        },
      },
      (request: WithOrganization) => organizations.delete(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    app.get(
      '/v1/organizations/:id/members',
      {
        config,
        schema: {
          operationId: 'listOrganizationMembers',
          description: "The organization's members with their roles, newest first; `starting_after` is a user id.",
          tags,
          security,
          summary: 'List the members, newest first; `starting_after` is a user id',
          params: OrganizationParams,
          querystring: PageQuery,
          response: { 200: MembershipListSchema },
        },
      },
      (request: WithOrganization) =>
        organizations.listMembers(requireSecretKey(request).projectId, request.params.id, request.query as PageQuery),
    );

    app.post(
      '/v1/organizations/:id/members',
      {
        config,
        schema: {
          operationId: 'addOrganizationMember',
          description:
            'Adds a user of the project to the organization with a role (default `member`); a user who is a member already is 409.',
          errors: ['organization_member_exists'],
          tags,
          security,
          summary: 'Add a user of the project as a member with a role (default `member`)',
          params: OrganizationParams,
          body: AddMemberBody,
          response: { 201: MembershipSchema },
        },
      },
      async (request: WithOrganization, reply: FastifyReply) => {
        const member = await organizations.addMember(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as AddMemberBody,
          auditContext(request),
        );
        return reply.code(201).send(member);
      },
    );

    app.patch(
      '/v1/organizations/:id/members/:user_id',
      {
        config,
        schema: {
          operationId: 'updateOrganizationMember',
          description: "Changes a member's role. The last `owner` cannot be demoted, so an organization always keeps one.",
          errors: ['organization_owner_required'],
          tags,
          security,
          summary: "Change a member's role; the last owner cannot be demoted",
          params: MemberParams,
          body: UpdateMemberBody,
          response: { 200: MembershipSchema },
        },
      },
      (request: WithMember) =>
        organizations.updateMember(
          requireSecretKey(request).projectId,
          request.params.id,
          request.params.user_id,
          request.body as UpdateMemberBody,
          auditContext(request),
        ),
    );

    app.delete(
      '/v1/organizations/:id/members/:user_id',
      {
        config,
        schema: {
          operationId: 'removeOrganizationMember',
          description: 'Removes a member from the organization. The last `owner` cannot be removed.',
          errors: ['organization_owner_required'],
          tags,
          security,
          summary: 'Remove a member; the last owner cannot be removed',
          params: MemberParams,
          response: { 200: DeletedMembershipSchema },
        },
      },
      (request: WithMember) =>
        organizations.removeMember(requireSecretKey(request).projectId, request.params.id, request.params.user_id, auditContext(request)),
    );

    app.post(
      '/v1/organizations/:id/authorize',
      {
        config,
        schema: {
          operationId: 'checkOrganizationPermission',
          description:
            "Whether the user's role in the organization grants the permission, read from the database on every call, so a change of role or of the role's permissions counts at once. A user who is not a member gets `{allowed: false, role: null}`.",
          tags,
          security,
          summary: "Whether a user's role in the organization grants a permission, read from the database on every call",
          params: OrganizationParams,
          body: AuthorizeBody,
          response: { 200: AuthorizationSchema },
        },
      },
      (request: WithOrganization) =>
        organizations.authorize(requireSecretKey(request).projectId, request.params.id, request.body as AuthorizeBody),
    );

    app.post(
      '/v1/organizations/:id/invitations',
      {
        config,
        schema: {
          operationId: 'createOrganizationInvitation',
          description:
            'Invites an email address to the organization with a role and sends the invitation email with a single-use token. A pending invitation of the same address is replaced.',
          errors: ['organization_member_exists'],
          tags,
          security,
          summary: 'Invite an email address with a role; sends the invitation email. Replaces a pending invitation of the same address',
          params: OrganizationParams,
          body: CreateInvitationBody,
          response: { 201: InvitationSchema },
        },
      },
      async (request: WithOrganization, reply: FastifyReply) => {
        const invitation = await invitations.create(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as CreateInvitationBody,
          auditContext(request),
        );
        return reply.code(201).send(invitation);
      },
    );

    app.get(
      '/v1/organizations/:id/invitations',
      {
        config,
        schema: {
          operationId: 'listOrganizationInvitations',
          description:
            "The organization's invitations, newest first, whatever their status (`pending`, `accepted`, `revoked`, `replaced`, `expired`).",
          tags,
          security,
          summary: 'List the invitations, newest first, whatever their status',
          params: OrganizationParams,
          querystring: PageQuery,
          response: { 200: InvitationListSchema },
        },
      },
      (request: WithOrganization) => invitations.list(requireSecretKey(request).projectId, request.params.id, request.query as PageQuery),
    );

    app.delete(
      '/v1/organizations/:id/invitations/:invitation_id',
      {
        config,
        schema: {
          operationId: 'revokeOrganizationInvitation',
          description: 'Revokes a pending invitation: its token stops working.',
          errors: ['invitation_not_pending'],
          tags,
          security,
          summary: 'Revoke a pending invitation; its token stops working',
          params: InvitationParams,
          response: { 200: InvitationSchema },
        },
      },
      (request: WithInvitation) =>
        invitations.revoke(requireSecretKey(request).projectId, request.params.id, request.params.invitation_id, auditContext(request)),
    );

    app.post(
      '/v1/invitations/accept',
      {
        // Idempotency keys of end users are kept per user, so two users' keys never meet.
        config: {
          credential: 'session',
          idempotency: {
            scope: (request: FastifyRequest) => `user:${request.principal?.kind === 'session' ? request.principal.userId : ''}`,
          },
        },
        onSend: browser.onSend,
        schema: {
          operationId: 'acceptInvitation',
          description:
            "Accepts an invitation with its token: the session user becomes a member with the invited role. The user's verified email must be the invited address (403 otherwise).",
          errors: ['token_invalid', 'token_expired', 'invitation_not_pending', 'invitation_email_mismatch', 'organization_member_exists'],
          tags,
          security: sessionSecurity,
          summary: "Accept an invitation: the session user's verified email must be the invited address",
          body: AcceptInvitationBody,
          response: { 200: UserMembershipSchema },
        },
      },
      (request) => {
        const principal = sessionOf(request, 'POST /v1/invitations/accept');
        return invitations.accept(
          principal.projectId,
          principal.userId,
          (request.body as AcceptInvitationBody).token,
          auditContext(request),
        );
      },
    );
    browser.preflight(app, '/v1/invitations/accept', ['POST']);

    app.get(
      '/v1/users/me/organizations',
      {
        config: { credential: 'session' },
        onSend: browser.onSend,
        schema: {
          operationId: 'listCurrentUserOrganizations',
          description: "The session user's memberships, newest first, each with its organization; `starting_after` is an organization id.",
          tags,
          security: sessionSecurity,
          summary: "The session user's memberships, newest first, each with its organization; `starting_after` is an organization id",
          querystring: PageQuery,
          response: { 200: UserMembershipListSchema },
        },
      },
      (request) => {
        const principal = sessionOf(request, 'GET /v1/users/me/organizations');
        return organizations.listUserMemberships(principal.projectId, principal.userId, request.query as PageQuery);
      },
    );
    browser.preflight(app, '/v1/users/me/organizations', ['GET']);
  };
}

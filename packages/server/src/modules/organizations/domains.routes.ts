import type { FastifyReply } from 'fastify';
import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import {
  AddDomainBody,
  DeletedOrganizationDomainSchema,
  DomainParams,
  DomainsPageQuery,
  OrganizationDomainListSchema,
  OrganizationDomainSchema,
} from './domains.schemas.js';
import type { OrganizationDomainsService } from './domains.service.js';
import { OrganizationParams } from './organizations.schemas.js';

/** HTTP only: `/v1/organizations/{id}/domains*`. */
export function organizationDomainsRoutes(domains: OrganizationDomainsService): RouteModule {
  return routeModule('organizations', [
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/domains',
      credential: 'secret',
      operationId: 'addOrganizationDomain',
      summary: 'Add an email domain: pending until its TXT record is verified, or verified at once with `manual`',
      description:
        'Publish `txt_record.value` as a TXT record at `txt_record.name`, then call `POST …/domains/{domain}/verify`. ' +
        "`manual` records the operator's own assertion that the organization owns the domain. Public mail domains are refused.",
      errors: ['domain_not_allowed', 'domain_taken'],
      params: OrganizationParams,
      body: AddDomainBody,
      response: { 201: OrganizationDomainSchema },
      handler: async (request, reply: FastifyReply) => {
        const domain = await domains.add(requireSecretKey(request).projectId, request.params.id, request.body, auditContext(request));
        return reply.code(201).send(domain);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id/domains',
      credential: 'secret',
      operationId: 'listOrganizationDomains',
      summary: "The organization's domains, newest first; `starting_after` is a domain",
      description: "The organization's email domains with their status, newest first; `starting_after` is a domain.",
      params: OrganizationParams,
      querystring: DomainsPageQuery,
      response: { 200: OrganizationDomainListSchema },
      handler: (request) => domains.list(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id/domains/:domain',
      credential: 'secret',
      operationId: 'getOrganizationDomain',
      summary: 'Retrieve a domain of the organization, with its status and TXT record',
      description:
        'A domain of the organization with its status and the TXT record that verifies it. The path takes the name in Unicode or punycode.',
      params: DomainParams,
      response: { 200: OrganizationDomainSchema },
      handler: (request) => domains.get(requireSecretKey(request).projectId, request.params.id, request.params.domain),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/organizations/:id/domains/:domain',
      credential: 'secret',
      operationId: 'deleteOrganizationDomain',
      summary: "Remove a domain; the organization's SSO connection stops answering for it",
      description: "Removes a domain from the organization; its SSO connection stops answering for the domain's addresses.",
      params: DomainParams,
      response: { 200: DeletedOrganizationDomainSchema },
      handler: (request) =>
        domains.remove(requireSecretKey(request).projectId, request.params.id, request.params.domain, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/domains/:domain/verify',
      credential: 'secret',
      operationId: 'verifyOrganizationDomain',
      summary: 'Look the TXT record up and mark the domain verified when it holds the value; a verified domain answers as it is',
      description:
        'Looks the TXT record up and marks the domain verified when it holds the expected value; otherwise 422 `domain_unverified` and the domain stays pending. A domain another organization has verified is 409 `domain_taken`. Emits `organization.domain.verified`.',
      errors: ['domain_unverified', 'domain_taken'],
      params: DomainParams,
      response: { 200: OrganizationDomainSchema },
      handler: (request) =>
        domains.verify(requireSecretKey(request).projectId, request.params.id, request.params.domain, auditContext(request)),
    }),
  ]);
}

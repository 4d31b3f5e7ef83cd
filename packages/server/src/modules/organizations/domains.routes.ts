import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
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

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['organizations'];
const config = { credential: 'secret' } as const;

type WithOrganization = FastifyRequest<{ Params: { id: string } }>;
type WithDomain = FastifyRequest<{ Params: { id: string; domain: string } }>;

/** HTTP only: `/v1/organizations/{id}/domains*`. */
export function organizationDomainsRoutes(domains: OrganizationDomainsService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/organizations/:id/domains',
      {
        config,
        schema: {
          operationId: 'addOrganizationDomain',
          errors: ['domain_not_allowed', 'domain_taken'],
          tags,
          security,
          summary: 'Add an email domain: pending until its TXT record is verified, or verified at once with `manual`',
          description:
            'Publish `txt_record.value` as a TXT record at `txt_record.name`, then call `POST …/domains/{domain}/verify`. ' +
            "`manual` records the operator's own assertion that the organization owns the domain. Public mail domains are refused.",
          params: OrganizationParams,
          body: AddDomainBody,
          response: { 201: OrganizationDomainSchema },
        },
      },
      async (request: WithOrganization, reply: FastifyReply) => {
        const domain = await domains.add(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as AddDomainBody,
          auditContext(request),
        );
        return reply.code(201).send(domain);
      },
    );

    app.get(
      '/v1/organizations/:id/domains',
      {
        config,
        schema: {
          operationId: 'listOrganizationDomains',
          description: "The organization's email domains with their status, newest first; `starting_after` is a domain.",
          tags,
          security,
          summary: "The organization's domains, newest first; `starting_after` is a domain",
          params: OrganizationParams,
          querystring: DomainsPageQuery,
          response: { 200: OrganizationDomainListSchema },
        },
      },
      (request: WithOrganization) =>
        domains.list(requireSecretKey(request).projectId, request.params.id, request.query as DomainsPageQuery),
    );

    app.get(
      '/v1/organizations/:id/domains/:domain',
      {
        config,
        schema: {
          operationId: 'getOrganizationDomain',
          description:
            'A domain of the organization with its status and the TXT record that verifies it. The path takes the name in Unicode or punycode.',
          tags,
          security,
          summary: 'Retrieve a domain of the organization, with its status and TXT record',
          params: DomainParams,
          response: { 200: OrganizationDomainSchema },
        },
      },
      (request: WithDomain) => domains.get(requireSecretKey(request).projectId, request.params.id, request.params.domain),
    );

    app.delete(
      '/v1/organizations/:id/domains/:domain',
      {
        config,
        schema: {
          operationId: 'deleteOrganizationDomain',
          description: "Removes a domain from the organization; its SSO connection stops answering for the domain's addresses.",
          tags,
          security,
          summary: "Remove a domain; the organization's SSO connection stops answering for it",
          params: DomainParams,
          response: { 200: DeletedOrganizationDomainSchema },
        },
      },
      (request: WithDomain) =>
        domains.remove(requireSecretKey(request).projectId, request.params.id, request.params.domain, auditContext(request)),
    );

    app.post(
      '/v1/organizations/:id/domains/:domain/verify',
      {
        config,
        schema: {
          operationId: 'verifyOrganizationDomain',
          description:
            'Looks the TXT record up and marks the domain verified when it holds the expected value; otherwise 422 `domain_unverified` and the domain stays pending. A domain another organization has verified is 409 `domain_taken`. Emits `organization.domain.verified`.',
          errors: ['domain_unverified', 'domain_taken'],
          tags,
          security,
          summary: 'Look the TXT record up and mark the domain verified when it holds the value; a verified domain answers as it is',
          params: DomainParams,
          response: { 200: OrganizationDomainSchema },
        },
      },
      (request: WithDomain) =>
        domains.verify(requireSecretKey(request).projectId, request.params.id, request.params.domain, auditContext(request)),
    );
  };
}

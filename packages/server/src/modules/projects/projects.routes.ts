import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { ApiError } from '../../lib/errors.js';
import { auditContext } from '../audit/audit.service.js';
import type { ProjectsService } from './projects.service.js';
import {
  ApiKeyListSchema,
  ApiKeyParams,
  ApiKeySchema,
  ApiKeyWithSecretSchema,
  CreateApiKeyBody,
  ListApiKeysQuery,
  ProjectSchema,
  UpdateProjectBody,
} from './projects.schemas.js';

export function projectsRoutes(projects: ProjectsService): RouteModule {
  return routeModule('projects', [
    defineRoute({
      method: 'GET',
      url: '/v1/project',
      credential: 'secret',
      operationId: 'getProject',
      summary: 'The project the secret key belongs to',
      description: 'The project the secret key belongs to: its id, name and passkey relying party (`webauthn`, null until set).',
      response: { 200: ProjectSchema },
      handler: (request) => projects.getProject(requireSecretKey(request).projectId),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/project',
      credential: 'secret',
      operationId: 'updateProject',
      summary: "Change the project's name or its passkey relying party (`webauthn`)",
      description:
        "Changes the project's `name`, or its passkey relying party: `webauthn` is `{rp_id, rp_name, origins}`, or null to remove it. Until a relying party is set, every passkey route answers 400 `webauthn_not_configured`; removing or changing it leaves existing passkeys in place.",
      body: UpdateProjectBody,
      response: { 200: ProjectSchema },
      handler: (request) => projects.updateProject(requireSecretKey(request).projectId, request.body, { context: auditContext(request) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/api-keys',
      credential: 'secret',
      operationId: 'createApiKey',
      summary: 'Create a secret key; the response carries the key, shown only here',
      description:
        'Creates a secret key of the project. The whole key (`svc_sk_…`) is in this response only: the service keeps its hash, and lists it afterwards by prefix and last four characters.',
      tags: ['api keys'],
      body: CreateApiKeyBody,
      response: { 201: ApiKeyWithSecretSchema },
      handler: async (request, reply) => {
        const body = request.body;
        const { apiKey, secretKey } = await projects.createKey(requireSecretKey(request).projectId, {
          ...(body.name === undefined ? {} : { name: body.name }),
          context: auditContext(request),
        });
        return reply.code(201).send({ ...apiKey, secret_key: secretKey });
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/api-keys',
      credential: 'secret',
      operationId: 'listApiKeys',
      summary: "The project's secret keys, newest first, by prefix and last four characters",
      description:
        "The project's secret keys, newest first, revoked ones included. A key is shown by its prefix and last four characters, never whole.",
      tags: ['api keys'],
      querystring: ListApiKeysQuery,
      response: { 200: ApiKeyListSchema },
      handler: async (request) => {
        const page = await projects.listKeysPage(requireSecretKey(request).projectId, {
          limit: request.query.limit ?? 20,
          startingAfter: request.query.starting_after,
        });
        return { object: 'list', data: page.data, has_more: page.hasMore };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/api-keys/:id/revoke',
      credential: 'secret',
      operationId: 'revokeApiKey',
      summary: 'Revoke a secret key at once; its dashboard sessions end with it. Not the key making the request',
      description:
        'Revokes a secret key at once: every later request with it is 401 `invalid_api_key`, and dashboard sessions opened with it end. The key making the request cannot revoke itself.',
      errors: ['api_key_in_use'],
      tags: ['api keys'],
      params: ApiKeyParams,
      response: { 200: ApiKeySchema },
      handler: async (request) => {
        const principal = requireSecretKey(request);
        if (request.params.id === principal.keyId) {
          const through = principal.via === 'dashboard' ? 'this dashboard session was opened with' : 'this request is made with';
          throw new ApiError('api_key_in_use', `${request.params.id} is the key ${through}; revoke it with another key.`, { param: 'id' });
        }
        return projects.revokeKey(principal.projectId, request.params.id, { context: auditContext(request) });
      },
    }),
  ]);
}

import type { FastifyInstance } from 'fastify';
import type { RouteModule } from '../../http/app.js';
import { requireSecretKey } from '../../http/principal.js';
import type { ProjectsService } from './projects.service.js';
import { ProjectSchema } from './projects.schemas.js';

export function projectsRoutes(projects: ProjectsService): RouteModule {
  return (app: FastifyInstance) => {
    app.get(
      '/v1/project',
      {
        config: { credential: 'secret' },
        schema: {
          tags: ['projects'],
          summary: 'The project the secret key belongs to',
          security: [{ secretKey: [] }, { secretKeyHeader: [] }],
          response: { 200: ProjectSchema },
        },
      },
      (request) => projects.getProject(requireSecretKey(request).projectId),
    );
  };
}

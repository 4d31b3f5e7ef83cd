// GET /v1/project with `Authorization: Bearer <secret key>`: the service's trivial authenticated
// route, every cross-cutting hook included, against bare Fastify. Target: at least 60 %
// of the baseline's throughput. Runs on SQLite and, when it is reachable, on PostgreSQL; once per
// log level in BENCH_LOG_LEVELS (warn, then info).
import { measure } from '../lib/load.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, expectOk, prepareDatabase, startService } from '../lib/service.js';

export const scenario = {
  name: 'auth_route',
  description: 'GET /v1/project with a secret key, SQLite and PostgreSQL, vs bare Fastify',

  async run(ctx) {
    const baseline = await ctx.baseline();
    for (const dialect of ['sqlite', 'postgres']) {
      if (dialect === 'postgres') {
        const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
        if (unreachable !== undefined) {
          ctx.note(`auth_route [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
          continue;
        }
      }
      const database = await prepareDatabase(ctx, dialect);
      try {
        const { secretKey } = createProject(ctx, database);
        const headers = { authorization: `Bearer ${secretKey}` };
        for (const logLevel of ctx.options.logLevels) {
          const service = await startService(ctx, database, { logLevel });
          try {
            const url = `${service.origin}/v1/project`;
            const project = await expectOk(url, headers);
            if (project.object !== 'project') throw new Error(`GET /v1/project answered ${JSON.stringify(project)}`);
            const measured = await measure({ url, headers, options: ctx.options, serverPid: service.pid });
            ctx.record({ bench: 'auth_route', dialect, log_level: logLevel, ...ctx.compare(measured, baseline) });
          } finally {
            await service.stop();
          }
        }
      } finally {
        await database.drop();
      }
    }
  },
};

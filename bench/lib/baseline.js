import { join } from 'node:path';
import { measure } from './load.js';
import { freePort, LOOPBACK, startServer } from './processes.js';
import { expectOk } from './service.js';

/** Bare Fastify 5 (logger off, one route) in its own process, measured like every scenario. */
export async function measureBaseline(ctx) {
  const port = await freePort();
  const server = await startServer({
    label: `bare Fastify (port ${port})`,
    script: join(ctx.benchDir, 'baseline-server.js'),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', PORT: String(port) },
    logFile: join(ctx.workDir, `baseline-${port}.log`),
    readyUrl: `http://${LOOPBACK}:${port}/baseline`,
  });
  try {
    const url = `http://${LOOPBACK}:${port}/baseline`;
    await expectOk(url);
    return await measure({ url, options: ctx.options, serverPid: server.pid });
  } finally {
    await server.stop();
  }
}

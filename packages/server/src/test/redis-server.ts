import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

/** A `redis-server` of the test's own, on a loopback port that stays the same across restarts. */
export interface TestRedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, as a crashed or partitioned Redis: no goodbye to the clients. Resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (it keeps nothing on disk). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** `redis-server` on this machine, or '' when it is not installed (test/global-setup.ts): skip then. */
export const redisServerCommand = inject('redisServerCommand');

/** How long a started `redis-server` may take to accept connections. */
const START_TIMEOUT_MS = 10_000;

export async function startTestRedisServer(): Promise<TestRedisServer> {
  if (redisServerCommand === '') throw new Error('redis-server is not installed; the test should have been skipped');
  const port = await freePort();
  let child = await spawnRedis(port);
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill();
      child = await spawnRedis(port);
    },
    stop: kill,
  };
}

async function spawnRedis(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
  const child = spawn(redisServerCommand, args, { stdio: 'ignore' });
  const deadlineMs = Date.now() + START_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} before accepting connections`);
    if (Date.now() > deadlineMs) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms`);
    }
    await sleep(20);
  }
  return child;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port nothing listens on now: the system's pick for a listener closed at once. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

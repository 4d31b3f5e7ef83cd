import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The built CLI (`npm run build` first), as an operator runs it. */
export const SVC = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface ServeProcess {
  readonly origin: string;
  readonly port: number;
  readonly child: ChildProcess;
}

/**
 * `svc serve` in a process of its own on a loopback port (a free one unless given), ready once
 * /healthz answers (within 30 s).
 */
export async function startServeProcess(env: Readonly<Record<string, string>>, port?: number): Promise<ServeProcess> {
  const listenPort = port ?? (await freePort());
  const child = spawn(process.execPath, [SVC, 'serve'], { env: { ...env, PORT: String(listenPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const origin = `http://127.0.0.1:${listenPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc serve exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) return { origin, port: listenPort, child };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`svc serve did not answer on ${origin} within 30 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Ends a serve process: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopServeProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** SIGKILL, and wait until the process is gone. */
export async function killServeProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

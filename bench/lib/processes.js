import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { defer } from './cleanup.js';

export const LOOPBACK = '127.0.0.1';

const READY_TIMEOUT_MS = 30_000;
const READY_POLL_MS = 100;
const STOP_GRACE_MS = 10_000;

/** Every child still running; killed outright if the runner exits without stopping them. */
const running = new Set();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A TCP port that was free on the loopback interface a moment ago. */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}

/** One GET on the loopback interface: `{ status, body }`, or a rejection after `timeoutMs`. */
export function httpGet(url, { headers = {}, timeoutMs = 5000 } = {}) {
  assertLoopback(url);
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, timeout: timeoutMs }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: chunks.join('') }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

export function assertLoopback(url) {
  const { hostname } = new URL(url);
  if (hostname !== LOOPBACK && hostname !== 'localhost' && hostname !== '[::1]') {
    throw new Error(`benchmarks only talk to loopback addresses, not ${hostname}`);
  }
}

/**
 * Starts a Node server in a child process with its output in `logFile`, and resolves once
 * `readyUrl` answers 200. The child is stopped by the returned `stop()` or by the runner's cleanup.
 */
export async function startServer({ label, script, args = [], nodeFlags = [], env, logFile, readyUrl }) {
  const logFd = openSync(logFile, 'a');
  let child;
  try {
    child = spawn(process.execPath, [...nodeFlags, script, ...args], { env, stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  running.add(child);
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A process that could not be started emits 'error' and never 'exit'.
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
  void exited.then(() => running.delete(child));

  const stop = defer(`stop ${label}`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  });

  try {
    await waitUntilReady(child, readyUrl);
  } catch (error) {
    await stop();
    throw new Error(`${label} did not start: ${error instanceof Error ? error.message : String(error)}\n${tail(logFile)}`);
  }
  return { pid: child.pid, stop, logFile };
}

async function waitUntilReady(child, url) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError = 'no answer yet';
  for (let attempt = 0; attempt < READY_TIMEOUT_MS / READY_POLL_MS && Date.now() < deadline; attempt += 1) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the process exited (code ${child.exitCode ?? 'none'}, signal ${child.signalCode ?? 'none'})`);
    }
    try {
      const { status } = await httpGet(url, { timeoutMs: 1000 });
      if (status === 200) return;
      lastError = `HTTP ${status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(READY_POLL_MS);
  }
  throw new Error(`${url} not ready after ${READY_TIMEOUT_MS} ms (${lastError})`);
}

/** Runs a Node script to completion (bounded) and returns its stdout; throws with its stderr on failure. */
export function runNode(script, args, { env, timeoutMs = 60_000 }) {
  const result = spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8', timeout: timeoutMs });
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) {
    throw new Error(`node ${script} ${args.join(' ')} exited with ${result.status ?? result.signal}: ${result.stderr}`);
  }
  return result.stdout;
}

/** The last lines of a log file, for an error message. */
export function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

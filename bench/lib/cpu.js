import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Where the CPU went during a measurement (Linux /proc; elsewhere every figure is null): the
 * server process, this process (the load generator), and the rest of the machine (PostgreSQL
 * backends, and anything else running, such as another developer's tests). Percent of one core.
 */
const ticksPerSecond = clockTicks();

/** Clock ticks per second of /proc's CPU times. */
export function clockTicksPerSecond() {
  return ticksPerSecond;
}

/** Opens a measurement window; `serverPid` is the server process, if there is one. */
export function startCpuWindow(serverPid) {
  return {
    atMs: performance.now(),
    self: process.cpuUsage(),
    serverPid,
    server: serverPid === undefined ? null : processTicks(serverPid),
    serverMain: serverPid === undefined ? null : processTicks(serverPid, serverPid),
    machine: machineTicks(),
  };
}

/** CPU use since `startCpuWindow`, in percent of one core. */
export function cpuSince(start) {
  const end = { atMs: performance.now(), self: process.cpuUsage(), machine: machineTicks() };
  const seconds = (end.atMs - start.atMs) / 1000;
  if (seconds <= 0) return null;
  const selfSeconds = (end.self.user - start.self.user + end.self.system - start.self.system) / 1e6;
  const loadgenPct = (selfSeconds / seconds) * 100;
  let serverPct = null;
  let serverSeconds = null;
  if (start.server !== null) {
    const ticks = processTicks(start.serverPid);
    if (ticks !== null) {
      serverSeconds = (ticks - start.server) / ticksPerSecond;
      serverPct = (serverSeconds / seconds) * 100;
    }
  }
  // The server's main (JavaScript) thread alone: without libuv's and the argon2 pool's threads, or GC helpers.
  let serverMainSeconds = null;
  if (start.serverMain !== null) {
    const ticks = processTicks(start.serverPid, start.serverPid);
    if (ticks !== null) serverMainSeconds = (ticks - start.serverMain) / ticksPerSecond;
  }
  let restPct = null;
  let machinePct = null;
  if (start.machine !== null && end.machine !== null) {
    const busySeconds = (end.machine.busy - start.machine.busy) / ticksPerSecond;
    machinePct = (busySeconds / seconds) * 100;
    restPct = Math.max(0, machinePct - loadgenPct - (serverPct ?? 0));
  }
  return {
    server_cpu_s: serverSeconds,
    server_main_thread_cpu_s: serverMainSeconds,
    server_pct: round(serverPct),
    loadgen_pct: round(loadgenPct),
    rest_pct: round(restPct),
    machine_pct: round(machinePct),
  };
}

/** utime + stime of a process, or with `tid` of one of its threads (the main thread's tid is the pid). */
function processTicks(pid, tid) {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

function machineTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
    const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: total - idle };
  } catch {
    return null;
  }
}

function clockTicks() {
  try {
    const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 });
    const value = Number(result.stdout.trim());
    return Number.isInteger(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

function round(value) {
  return value === null ? null : Math.round(value);
}

import { clearInterval, setInterval } from 'node:timers';
import { readdirSync, readFileSync } from 'node:fs';
import { clockTicksPerSecond } from './cpu.js';

const SAMPLE_INTERVAL_MS = 200;

/**
 * CPU time of the PostgreSQL backends serving one database (Linux /proc; elsewhere null), as a
 * probe for `measure`: started when the measured window opens, read when it closes. Backends are
 * found by their process title ("postgres: <user> <database> <client> …") and sampled every
 * 200 ms, so a backend that exits before the end (pgbench's do) still counts up to its last
 * sample; one that appears during the window counts from zero.
 */
export function postgresCpuProbe(databaseName) {
  return {
    name: 'postgres',
    start() {
      const first = backendTicks(databaseName);
      if (first === null) return () => null;
      const last = new Map(first);
      const sample = () => {
        for (const [pid, ticks] of backendTicks(databaseName) ?? []) last.set(pid, ticks);
      };
      const timer = setInterval(sample, SAMPLE_INTERVAL_MS);
      return () => {
        clearInterval(timer);
        sample();
        let ticks = 0;
        for (const [pid, value] of last) ticks += value - (first.get(pid) ?? 0);
        return ticks / clockTicksPerSecond();
      };
    },
  };
}

function backendTicks(databaseName) {
  let pids;
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return null;
  }
  const found = new Map();
  const marker = ` ${databaseName} `;
  for (const pid of pids) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(marker)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      found.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended while being read.
    }
  }
  return found;
}

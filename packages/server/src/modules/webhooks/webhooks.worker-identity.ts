import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBase62 } from '../../lib/ids.js';

/**
 * A delivery worker's identity, stable across restarts (docs/adr/0006-webhook-delivery.md, "Crash
 * resume"). The worker's leases carry it, so a worker that starts again after a crash takes back
 * at once the deliveries it had leased, instead of waiting out their leases.
 *
 * Without `WEBHOOK_WORKER_ID`, a worker takes the first free slot under `DATA_DIR`: the file
 * `webhook-worker-<n>.json` holds the slot's identity and the process id of its holder; a slot is
 * free when the file is absent or its process is no longer running (a clean stop or a crash). A
 * restarted process on the same host and `DATA_DIR` so finds its old identity; two running
 * processes never share one.
 */

const SLOTS_MAX = 64;

interface Slot {
  readonly id: string;
  readonly pid: number;
}

export function claimWorkerSlot(dataDir: string, pid: number = process.pid): string {
  mkdirSync(dataDir, { recursive: true });
  for (let index = 0; index < SLOTS_MAX; index += 1) {
    const file = join(dataDir, `webhook-worker-${index}.json`);
    const current = readSlot(file);
    if (current !== undefined && current.pid !== pid && isRunning(current.pid)) continue;
    const id = current?.id ?? `w${index}${randomBase62(12)}`;
    // Written whole and renamed over: a reader never sees half a file. Of two processes that take
    // the same free slot at once, the last rename wins and the other sees it and moves on.
    const temporary = `${file}.${pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ id, pid } satisfies Slot), { mode: 0o600 });
    renameSync(temporary, file);
    if (readSlot(file)?.pid === pid) return id;
  }
  // Every slot held by a running process: a fresh identity (a crash then waits out its leases).
  return `w${randomBase62(16)}`;
}

function readSlot(file: string): Slot | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<Slot>;
    if (typeof value.id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value.id) && typeof value.pid === 'number') {
      return { id: value.id, pid: value.pid };
    }
  } catch {
    // Absent or unreadable: the slot is free.
  }
  return undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Cleanup actions (stop a server, drop a database, remove a temp directory) registered as they
 * become needed and run in reverse order, each at most once and each bounded in time, whether the
 * run finished, failed or was interrupted.
 */
const pending = [];

const CLEANUP_STEP_TIMEOUT_MS = 15_000;

/** Registers `action`; returns a function that runs it now (once) and unregisters it. */
export function defer(label, action) {
  const entry = { label, action, done: false };
  pending.push(entry);
  return () => runEntry(entry);
}

export async function runAllCleanups() {
  while (pending.length > 0) {
    const entry = pending[pending.length - 1];
    await runEntry(entry);
  }
}

async function runEntry(entry) {
  const index = pending.indexOf(entry);
  if (index !== -1) pending.splice(index, 1);
  if (entry.done) return;
  entry.done = true;
  let timer;
  try {
    await Promise.race([
      Promise.resolve().then(entry.action),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${CLEANUP_STEP_TIMEOUT_MS} ms`)), CLEANUP_STEP_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    console.error(`bench: cleanup "${entry.label}" failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

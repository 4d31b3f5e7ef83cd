import type { Logger } from 'pino';

export interface PeriodicJob {
  readonly name: string;
  readonly intervalMs: number;
  run(): Promise<void>;
}

export interface JobScheduler {
  /** Stops the timers and waits for any run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs each job every `intervalMs`, never two runs of one job at once. A failed run is logged and
 * tried again at the next tick. Timers are unref'd so they never keep a process alive alone.
 */
export function startJobs(jobs: readonly PeriodicJob[], logger: Logger): JobScheduler {
  const running = new Set<Promise<void>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const run = job
        .run()
        .catch((error: unknown) => logger.error({ err: error, job: job.name }, 'job failed'))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    }, job.intervalMs);
    timer.unref();
    return timer;
  });
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.allSettled([...running]);
    },
  };
}

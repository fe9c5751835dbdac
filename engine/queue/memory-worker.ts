import type { Job, JobProcessor, WorkerOptions } from './job-queue.ts';

/**
 * A worker of the in-process queue: its processor, how many jobs it runs at once, and the runs in
 * flight, which closing waits for. The queue (MemoryQueue) decides what a run's outcome does to its job.
 */
export class MemoryWorker {
  private readonly running = new Set<Promise<void>>();
  private readonly concurrency: number;
  private closing = false;

  constructor(
    private readonly processor: JobProcessor,
    private readonly options: WorkerOptions = {},
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
  }

  /** Whether it takes another job now. */
  get free(): boolean {
    return !this.closing && this.running.size < this.concurrency;
  }

  /** Runs `job`: `settle` hears its outcome (an error if the processor threw), then `next` frees the slot. */
  run(job: Job, settle: (error: Error | undefined) => void, next: () => void): void {
    const running = (async () => {
      let failure: Error | undefined;
      try {
        await this.processor(job);
      } catch (thrown) {
        failure = thrown instanceof Error ? thrown : new Error(String(thrown));
      }
      settle(failure);
    })();
    this.running.add(running);
    void running.finally(() => {
      this.running.delete(running);
      next();
    });
  }

  /** Tells the listener a run failed, after the queue has retried or dropped the job. */
  failed(job: Job, error: Error): void {
    try {
      this.options.onFailed?.(job, error);
    } catch {
      // A throwing listener must not take the queue down; BullMQ's worker swallows it the same way.
    }
  }

  /** Takes no more jobs; resolves when the runs in flight have ended. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

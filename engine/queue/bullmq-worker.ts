import { UnrecoverableError, Worker, type Job as BullJob } from 'bullmq';
import type { RedisClient } from '../../runtime/redis-client.ts';
import { fromBullmqId } from './bullmq-job-id.ts';
import type { Job, JobProcessor, JobWorker, WorkerOptions } from './job-queue.ts';
import { UnrecoverableJobError } from './unrecoverable-job-error.ts';

function ignore(): void {}

/** Our view of a BullMQ job; `attempt` counts the run that is starting, or, once it failed, the failed one. */
function jobOf(job: BullJob, attempt: number): Job {
  return { id: fromBullmqId(job.id ?? ''), name: job.name, data: job.data, attempt };
}

/**
 * A worker over a BullMQ Worker on the backend's shared worker connection (BullMQ duplicates it for
 * its blocking reads). It keeps the runs in flight so that closing while Redis is down can wait for
 * them and then force the rest.
 */
export class BullmqWorker implements JobWorker {
  private readonly running = new Set<Promise<void>>();
  private readonly bull: Worker;
  private readonly connection: RedisClient;

  constructor(
    queueName: string,
    processor: JobProcessor,
    options: WorkerOptions,
    shared: { connection: RedisClient; prefix: string },
    private readonly onClose: () => void,
  ) {
    this.connection = shared.connection;
    this.bull = new Worker(
      queueName,
      async (job) => {
        const run = processor(jobOf(job, job.attemptsMade + 1));
        this.running.add(run);
        try {
          await run;
        } catch (thrown) {
          // Bad data fails for good: BullMQ retries anything but its own UnrecoverableError.
          if (thrown instanceof UnrecoverableJobError) throw new UnrecoverableError(thrown.message);
          throw thrown instanceof Error ? thrown : new Error(String(thrown));
        } finally {
          this.running.delete(run);
        }
      },
      { connection: shared.connection, concurrency: options.concurrency ?? 1, prefix: shared.prefix },
    );
    // A Redis hiccup surfaces here; BullMQ reconnects by itself, and an unhandled 'error' would crash.
    this.bull.on('error', ignore);
    const onFailed = options.onFailed;
    if (onFailed) {
      this.bull.on('failed', (job, error) => {
        // BullMQ has already counted the failed run in attemptsMade.
        if (job) onFailed(jobOf(job, job.attemptsMade), error);
      });
    }
  }

  async close(): Promise<void> {
    this.onClose();
    if (this.connection.status === 'ready') return this.bull.close();
    // Redis is down: a graceful Worker.close() would wait for a reconnection forever
    // (taskforcesh/bullmq#4656), so wait for the running processors here and force the rest.
    await Promise.allSettled([...this.running]);
    await this.bull.close(true);
  }
}

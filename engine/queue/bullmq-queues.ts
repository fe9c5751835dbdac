import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Job, JobProcessor, JobQueue, JobWorker, QueueBackend } from './job-queue.ts';

const DEFAULT_ATTEMPTS = 5;
const DEFAULT_PREFIX = 'fleetcore';

/**
 * BullMQ rejects custom job ids that contain ':' or look like integers. This escape is reversible,
 * so two of our ids never map to one BullMQ id and the processor sees the id the caller gave:
 * '%' → '%25', ':' → '%3A', and an integer-looking id gets a '%i' prefix (no escape starts that way).
 */
export function toBullmqId(id: string): string {
  const escaped = id.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
  return `${parseInt(escaped, 10)}` === escaped ? `%i${escaped}` : escaped;
}

export function fromBullmqId(id: string): string {
  const unprefixed = id.startsWith('%i') ? id.slice(2) : id;
  return unprefixed.replace(/%(25|3A)/g, (m) => (m === '%25' ? '%' : ':'));
}

function ignore(): void {}

export interface BullmqOptions {
  /** Prefix of every key (one per deployment, so two sharing a Redis never see each other's jobs). */
  prefix?: string;
  /** How often the schedules made with repeat() are checked, and made again if Redis lost them (default 5 s). */
  scheduleCheckMs?: number;
  /** Told each time a lost schedule was made again. */
  onScheduleRestored?: (queue: string, jobName: string) => void;
}

/** QUIT lets pending replies arrive; a connection that is not up has nothing pending, and QUIT would wait for it. */
async function closeConnection(connection: Redis): Promise<void> {
  if (connection.status === 'ready') await connection.quit();
  else connection.disconnect();
}

/**
 * Queues and workers over BullMQ on Redis: jobs survive restarts and every engine process shares them.
 * All queues share one connection (commands fail after ioredis's retries, so an add during a Redis
 * outage rejects instead of hanging); all workers share another with `maxRetriesPerRequest: null`, as
 * BullMQ requires, and each worker adds the blocking connection BullMQ duplicates from it.
 *
 * Redis can come back without its data (restarted without persistence, a failover to an empty
 * replica, a FLUSHALL): the jobs go, and with them the schedules `repeat()` made, which nothing would
 * make again until the process restarts. So the schedules this process made are checked every
 * `scheduleCheckMs` and made again when missing, as a process starting would; the engine's own
 * schedules (the ETA refresh's catch-up) then rebuild the lost jobs from the database.
 */
export function bullmqQueues(redisUrl: string, options: BullmqOptions = {}): QueueBackend {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const scheduleCheckMs = options.scheduleCheckMs ?? 5_000;
  // Redis errors reach BullMQ's listeners; ours only keep ioredis from printing "Unhandled error event".
  const queueConnection = new Redis(redisUrl).on('error', ignore);
  const workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null }).on('error', ignore);
  const queues = new Map<string, { handle: JobQueue; bull: Queue }>();
  const workers = new Set<JobWorker>();
  const schedules = new Map<string, { queueName: string; bull: Queue; jobName: string; everyMs: number; data: unknown }>();
  let keeper: NodeJS.Timeout | undefined;
  let checking = false;

  async function upsertSchedule(bull: Queue, jobName: string, everyMs: number, data: unknown): Promise<void> {
    // A job scheduler is one Redis record per id: every process upserting it keeps one schedule.
    await bull.upsertJobScheduler(toBullmqId(jobName), { every: everyMs }, {
      name: jobName,
      data: data ?? {},
      opts: { attempts: DEFAULT_ATTEMPTS, backoff: { type: 'exponential', delay: 100 }, removeOnComplete: true, removeOnFail: 1000 },
    });
  }

  /** Makes again the schedules Redis no longer has; while Redis is unreachable, waits for the next check. */
  async function keepSchedules(): Promise<void> {
    if (checking || queueConnection.status !== 'ready') return;
    checking = true;
    try {
      for (const s of [...schedules.values()]) {
        if (await s.bull.getJobScheduler(toBullmqId(s.jobName))) continue;
        await upsertSchedule(s.bull, s.jobName, s.everyMs, s.data);
        options.onScheduleRestored?.(s.queueName, s.jobName);
      }
    } catch {
      // Redis went away again: the next check retries.
    } finally {
      checking = false;
    }
  }

  function queue(name: string): JobQueue {
    const existing = queues.get(name);
    if (existing) return existing.handle;
    const bull = new Queue(name, { connection: queueConnection, prefix });
    bull.on('error', ignore);
    const handle: JobQueue = {
      name,
      async add(jobName, data, jobOptions = {}) {
        const jobId = jobOptions.jobId === undefined ? undefined : toBullmqId(jobOptions.jobId);
        // BullMQ keeps failed jobs (removeOnFail), and a kept job blocks its id; ours must not outlive its run.
        if (jobId !== undefined) {
          const previous = await bull.getJob(jobId);
          if (previous && (await previous.isFailed())) await previous.remove();
        }
        await bull.add(jobName, data, {
          delay: jobOptions.delay,
          jobId,
          attempts: jobOptions.attempts ?? DEFAULT_ATTEMPTS,
          backoff: { type: 'exponential', delay: 100 },
          removeOnComplete: true,
          removeOnFail: 1000,
        });
      },
      async remove(jobId) {
        // 0 when the job is locked (active): left alone, as the contract says.
        await bull.remove(toBullmqId(jobId));
      },
      async repeat(jobName, everyMs, data) {
        if (!(everyMs > 0)) throw new Error(`repeat('${jobName}') needs everyMs > 0, got ${everyMs}.`);
        await upsertSchedule(bull, jobName, everyMs, data);
        schedules.set(`${name}\u0000${jobName}`, { queueName: name, bull, jobName, everyMs, data });
        if (!keeper) {
          keeper = setInterval(() => void keepSchedules(), scheduleCheckMs);
          keeper.unref();
        }
      },
      async counts() {
        const counts = await bull.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
        return { waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0), active: counts.active ?? 0, delayed: counts.delayed ?? 0, failed: counts.failed ?? 0 };
      },
      async close() {
        queues.delete(name);
        for (const [key, s] of schedules) if (s.queueName === name) schedules.delete(key);
        await bull.close();
      },
    };
    queues.set(name, { handle, bull });
    return handle;
  }

  function worker(
    queueName: string,
    processor: JobProcessor,
    workerOptions: { concurrency?: number; onFailed?: (job: Job, error: Error) => void } = {},
  ): JobWorker {
    const running = new Set<Promise<void>>();
    const bull = new Worker(
      queueName,
      async (job) => {
        const run = processor({ id: fromBullmqId(job.id ?? ''), name: job.name, data: job.data, attempt: job.attemptsMade + 1 });
        running.add(run);
        try {
          await run;
        } catch (thrown) {
          throw thrown instanceof Error ? thrown : new Error(String(thrown));
        } finally {
          running.delete(run);
        }
      },
      { connection: workerConnection, concurrency: workerOptions.concurrency ?? 1, prefix },
    );
    // A Redis hiccup surfaces here; BullMQ reconnects by itself, and an unhandled 'error' would crash.
    bull.on('error', ignore);
    const onFailed = workerOptions.onFailed;
    if (onFailed) {
      bull.on('failed', (job, error) => {
        if (!job) return;
        // BullMQ has already counted the failed run in attemptsMade.
        onFailed({ id: fromBullmqId(job.id ?? ''), name: job.name, data: job.data, attempt: job.attemptsMade }, error);
      });
    }
    const handle = {
      async close() {
        workers.delete(handle);
        if (workerConnection.status === 'ready') return bull.close();
        // Redis is down: a graceful Worker.close() would wait for a reconnection forever
        // (taskforcesh/bullmq#4656), so wait for the running processors here and force the rest.
        await Promise.allSettled([...running]);
        await bull.close(true);
      },
    };
    workers.add(handle);
    return handle;
  }

  return {
    kind: 'bullmq',
    queue,
    worker,
    async close() {
      clearInterval(keeper);
      schedules.clear();
      await Promise.allSettled([...workers].map((w) => w.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.bull.close()));
      workers.clear();
      queues.clear();
      await Promise.allSettled([queueConnection, workerConnection].map(closeConnection));
    },
  };
}

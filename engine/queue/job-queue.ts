/**
 * The job contract the engine is written against, as BullMQ defines it: named jobs with JSON data,
 * optional delay, a job id that makes adding the same job twice a no-op while it waits, retries with
 * backoff for a processor that throws, and repeatable jobs. Two implementations: BullMQ over Redis
 * (REDIS_URL; jobs survive restarts and are shared by every engine process) and an in-process queue
 * (the embedded default; scheduled jobs are rebuilt from the database at start).
 */
export interface JobOptions {
  /** Run no earlier than this many ms from now. */
  delay?: number;
  /** While a job with this id waits or runs, adding another with the same id does nothing. */
  jobId?: string;
  /** Attempts before the job is given up (default 5); retries wait 100 ms, 200 ms, 400 ms… */
  attempts?: number;
}

export interface Job<Data = unknown> {
  id: string;
  name: string;
  data: Data;
  /** 1 on the first run. */
  attempt: number;
}

export type JobProcessor = (job: Job) => Promise<void>;

export interface JobQueue {
  readonly name: string;
  add(name: string, data: unknown, options?: JobOptions): Promise<void>;
  /** Removes a waiting or delayed job by id (a cancelled travel's start); nothing if it is not there. */
  remove(jobId: string): Promise<void>;
  /** A job added every `everyMs` (one schedule per name, whatever the number of processes). */
  repeat(name: string, everyMs: number, data?: unknown): Promise<void>;
  /** Jobs held now by state (for the queue-depth metric). */
  counts(): Promise<QueueCounts>;
  close(): Promise<void>;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  /** Jobs that ran out of attempts and are kept for inspection (BullMQ keeps the last 1,000; in-process none). */
  failed: number;
}

export interface JobWorker {
  close(): Promise<void>;
}

/** Where queues and workers come from: Redis (BullMQ) or this process. */
export interface QueueBackend {
  readonly kind: 'bullmq' | 'in-process';
  queue(name: string): JobQueue;
  /** Processes the jobs of `queueName`, `concurrency` at a time; failures are retried per the job's attempts. */
  worker(queueName: string, processor: JobProcessor, options?: { concurrency?: number; onFailed?: (job: Job, error: Error) => void }): JobWorker;
  close(): Promise<void>;
}

import type { QueueHealth } from './queue-health.ts';

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

/**
 * Jobs come off a queue as they were stored: a name and JSON data, not yet checked (route-jobs.ts
 * checks them). A processor that throws UnrecoverableJobError fails the job at once, without retries.
 */
export type JobProcessor = (job: Job) => Promise<void>;

/** One kind of job a queue holds: its name and its payload. A queue's jobs are a union of these. */
export interface JobSpec {
  name: string;
  data: unknown;
}

/** The payload of the job named `N` in the union `J` (any data for a queue whose jobs are not typed). */
export type JobData<J extends JobSpec, N extends J['name']> = string extends J['name'] ? J['data'] : Extract<J, { name: N }>['data'];

declare const jobsOf: unique symbol;

/**
 * A queue's name that carries the union of its jobs, for the type checker only: `backend.queue(ENGINE_QUEUE)`
 * is then a queue on which adding a job of another name, or with another payload, does not compile.
 * A plain string names a queue whose jobs are not typed.
 */
export type QueueName<J extends JobSpec> = string & { readonly [jobsOf]?: J };

/** Names a queue whose jobs are the union `J`. */
export function queueName<J extends JobSpec>(name: string): QueueName<J> {
  return name;
}

/** A schedule's payload may be left out only when an empty payload is one (`repeat('prune', ms)`). */
type RepeatData<J extends JobSpec, N extends J['name']> = Record<string, never> extends JobData<J, N> ? [data?: JobData<J, N>] : [data: JobData<J, N>];

export interface JobQueue<J extends JobSpec = JobSpec> {
  readonly name: string;
  add<N extends J['name']>(name: N, data: JobData<J, N>, options?: JobOptions): Promise<void>;
  /** Removes a waiting or delayed job by id (a cancelled travel's start); nothing if it is not there. */
  remove(jobId: string): Promise<void>;
  /** A job added every `everyMs` (one schedule per name, whatever the number of processes). */
  repeat<N extends J['name']>(name: N, everyMs: number, ...data: RepeatData<J, N>): Promise<void>;
  /** Jobs held now by state (for the queue-depth metric). */
  counts(): Promise<QueueCounts>;
  close(): Promise<void>;
}

/**
 * What a backend builds a queue handle from: names and data unchecked, so one implementation serves
 * every union of jobs (it is a `JobQueue<J>` for any `J`).
 */
export interface UntypedQueue {
  readonly name: string;
  add(name: string, data: unknown, options?: JobOptions): Promise<void>;
  remove(jobId: string): Promise<void>;
  repeat(name: string, everyMs: number, data?: unknown): Promise<void>;
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

export interface WorkerOptions {
  /** Jobs run at once by this worker (default 1). */
  concurrency?: number;
  /** Told of each failed run, retried or not; a listener that throws is ignored. */
  onFailed?: (job: Job, error: Error) => void;
}

/** Where queues and workers come from: Redis (BullMQ) or this process. */
export interface QueueBackend {
  readonly kind: 'bullmq' | 'in-process';
  /** Whether the queues take jobs now (Redis answering a write, asked at most every few seconds); in-process, always. */
  health(): Promise<QueueHealth>;
  queue<J extends JobSpec = JobSpec>(name: QueueName<J>): JobQueue<J>;
  /** Processes the jobs of `queueName`, `concurrency` at a time; failures are retried per the job's attempts. */
  worker(queueName: string, processor: JobProcessor, options?: WorkerOptions): JobWorker;
  close(): Promise<void>;
}

import type { JobOptions, QueueCounts } from './job-queue.ts';
import type { MemoryWorker } from './memory-worker.ts';
import { UnrecoverableJobError } from './unrecoverable-job-error.ts';

const DEFAULT_ATTEMPTS = 5;
const BACKOFF_MS = 100;

interface Entry {
  id: string;
  name: string;
  /** Structured-cloned on add; cloned again for each run so a processor's mutations don't carry over. */
  data: unknown;
  attempts: number;
  /** Runs started so far. */
  runs: number;
  state: 'waiting' | 'delayed' | 'active';
  timer: NodeJS.Timeout | undefined;
}

interface Schedule {
  timer: NodeJS.Timeout;
  data: unknown;
}

function later(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

/**
 * One queue's jobs in this process's memory, with BullMQ's semantics (see job-queue.ts): a job id
 * that makes a second add a no-op while the job lives, delays, retries with exponential backoff,
 * schedules that fire every interval, and the ready jobs handed to its workers in the order they
 * became ready. Timers are unref'd so a pending delay or repeat never keeps the process alive.
 */
export class MemoryQueue {
  private seq = 0;
  /** Every job that waits, is delayed or runs, by id: what makes `jobId` a no-op while the job lives. */
  private readonly entries = new Map<string, Entry>();
  /** Ready jobs in the order they became ready. */
  private readonly ready: Entry[] = [];
  private readonly workers = new Set<MemoryWorker>();
  private readonly schedules = new Map<string, Schedule>();
  private closed = false;

  constructor(readonly name: string) {}

  add(name: string, data: unknown, options: JobOptions = {}): void {
    const id = options.jobId ?? String(++this.seq);
    if (this.entries.has(id)) return;
    const entry: Entry = {
      id,
      name,
      data: structuredClone(data),
      attempts: Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS),
      runs: 0,
      state: 'waiting',
      timer: undefined,
    };
    this.entries.set(entry.id, entry);
    const delay = options.delay ?? 0;
    if (delay > 0) {
      entry.state = 'delayed';
      entry.timer = later(delay, () => this.makeReady(entry));
    } else {
      this.makeReady(entry);
    }
  }

  remove(jobId: string): void {
    const entry = this.entries.get(jobId);
    if (!entry || entry.state === 'active') return;
    clearTimeout(entry.timer);
    if (entry.state === 'waiting') this.ready.splice(this.ready.indexOf(entry), 1);
    this.entries.delete(jobId);
  }

  repeat(name: string, everyMs: number, data: unknown): void {
    if (!(everyMs > 0)) throw new Error(`repeat('${name}') needs everyMs > 0, got ${everyMs}.`);
    const existing = this.schedules.get(name);
    if (existing) clearInterval(existing.timer);
    const schedule: Schedule = { data: structuredClone(data ?? {}), timer: setInterval(() => this.fire(name, schedule), everyMs) };
    schedule.timer.unref();
    this.schedules.set(name, schedule);
    // Like a BullMQ job scheduler with `every`: the first job at once, but not again on an upsert.
    if (!existing) this.fire(name, schedule);
  }

  counts(): QueueCounts {
    const counts = { waiting: 0, active: 0, delayed: 0, failed: 0 };
    for (const entry of this.entries.values()) counts[entry.state]++;
    return counts;
  }

  attach(worker: MemoryWorker): void {
    this.workers.add(worker);
    queueMicrotask(() => this.dispatch());
  }

  detach(worker: MemoryWorker): void {
    this.workers.delete(worker);
  }

  /** The backend closes: no timer fires again, no failed job is retried; resolves when the workers' runs have ended. */
  async close(): Promise<void> {
    this.closed = true;
    for (const schedule of this.schedules.values()) clearInterval(schedule.timer);
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    await Promise.allSettled([...this.workers].map((worker) => worker.close()));
  }

  private fire(name: string, schedule: Schedule): void {
    // Like BullMQ, at most one job of a schedule waits at a time: no pile-up while no worker runs.
    for (const entry of this.ready) if (entry.id.startsWith(`repeat:${name}:`)) return;
    this.add(name, schedule.data, { jobId: `repeat:${name}:${Date.now()}` });
  }

  private makeReady(entry: Entry): void {
    entry.state = 'waiting';
    entry.timer = undefined;
    this.ready.push(entry);
    // A microtask, not a direct call: add() must not run the processor's synchronous part.
    queueMicrotask(() => this.dispatch());
  }

  private dispatch(): void {
    for (const worker of this.workers) {
      while (worker.free && this.ready.length > 0) this.run(worker, this.ready.shift()!);
    }
  }

  private run(worker: MemoryWorker, entry: Entry): void {
    entry.state = 'active';
    entry.runs += 1;
    const job = { id: entry.id, name: entry.name, data: structuredClone(entry.data), attempt: entry.runs };
    worker.run(
      job,
      (error) => {
        if (!error) {
          this.entries.delete(entry.id);
          return;
        }
        if (!this.closed && entry.runs < entry.attempts && !(error instanceof UnrecoverableJobError)) {
          entry.state = 'delayed';
          entry.timer = later(BACKOFF_MS * 2 ** (entry.runs - 1), () => this.makeReady(entry));
        } else {
          this.entries.delete(entry.id);
        }
        worker.failed(job, error);
      },
      () => this.dispatch(),
    );
  }
}

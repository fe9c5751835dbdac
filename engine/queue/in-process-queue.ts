import type { Job, JobOptions, JobProcessor, JobQueue, JobWorker, QueueBackend } from './job-queue.ts';

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

interface WorkerState {
  processor: JobProcessor;
  concurrency: number;
  onFailed: ((job: Job, error: Error) => void) | undefined;
  active: Set<Promise<void>>;
  closing: boolean;
}

interface QueueState {
  name: string;
  seq: number;
  /** Every job that waits, is delayed or runs, by id: what makes `jobId` a no-op while the job lives. */
  entries: Map<string, Entry>;
  /** Ready jobs in the order they became ready. */
  ready: Entry[];
  workers: Set<WorkerState>;
  schedules: Map<string, Schedule>;
}

/**
 * Jobs in this process's memory, with BullMQ's semantics (see job-queue.ts): nothing survives a
 * restart, which is why the engine rebuilds its scheduled jobs from the database at start. Timers are
 * unref'd so a pending delay or repeat never keeps the process alive.
 */
export function inProcessQueues(): QueueBackend {
  const queues = new Map<string, QueueState>();
  let closed = false;

  function stateOf(name: string): QueueState {
    let state = queues.get(name);
    if (!state) {
      state = { name, seq: 0, entries: new Map(), ready: [], workers: new Set(), schedules: new Map() };
      queues.set(name, state);
    }
    return state;
  }

  function assertOpen(): void {
    if (closed) throw new Error('The in-process queue backend is closed; create a new one with inProcessQueues().');
  }

  function makeReady(queue: QueueState, entry: Entry): void {
    entry.state = 'waiting';
    entry.timer = undefined;
    queue.ready.push(entry);
    // A microtask, not a direct call: add() must not run the processor's synchronous part.
    queueMicrotask(() => dispatch(queue));
  }

  function later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  }

  function enqueue(queue: QueueState, entry: Entry, delay: number): void {
    queue.entries.set(entry.id, entry);
    if (delay > 0) {
      entry.state = 'delayed';
      entry.timer = later(delay, () => makeReady(queue, entry));
    } else {
      makeReady(queue, entry);
    }
  }

  function dispatch(queue: QueueState): void {
    for (const worker of queue.workers) {
      while (!worker.closing && worker.active.size < worker.concurrency && queue.ready.length > 0) {
        run(queue, worker, queue.ready.shift()!);
      }
    }
  }

  function run(queue: QueueState, worker: WorkerState, entry: Entry): void {
    entry.state = 'active';
    entry.runs += 1;
    const job: Job = { id: entry.id, name: entry.name, data: structuredClone(entry.data), attempt: entry.runs };
    const running = (async () => {
      try {
        await worker.processor(job);
        queue.entries.delete(entry.id);
      } catch (thrown) {
        const error = thrown instanceof Error ? thrown : new Error(String(thrown));
        if (!closed && entry.runs < entry.attempts) {
          entry.state = 'delayed';
          entry.timer = later(BACKOFF_MS * 2 ** (entry.runs - 1), () => makeReady(queue, entry));
        } else {
          queue.entries.delete(entry.id);
        }
        notifyFailed(worker, job, error);
      }
    })();
    worker.active.add(running);
    void running.finally(() => {
      worker.active.delete(running);
      dispatch(queue);
    });
  }

  function addJob(queue: QueueState, name: string, data: unknown, options: JobOptions = {}): void {
    const id = options.jobId ?? String(++queue.seq);
    if (queue.entries.has(id)) return;
    const entry: Entry = {
      id,
      name,
      data: structuredClone(data),
      attempts: Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS),
      runs: 0,
      state: 'waiting',
      timer: undefined,
    };
    enqueue(queue, entry, options.delay ?? 0);
  }

  function removeJob(queue: QueueState, jobId: string): void {
    const entry = queue.entries.get(jobId);
    if (!entry || entry.state === 'active') return;
    clearTimeout(entry.timer);
    if (entry.state === 'waiting') queue.ready.splice(queue.ready.indexOf(entry), 1);
    queue.entries.delete(jobId);
  }

  function repeatJob(queue: QueueState, name: string, everyMs: number, data: unknown): void {
    if (!(everyMs > 0)) throw new Error(`repeat('${name}') needs everyMs > 0, got ${everyMs}.`);
    const existing = queue.schedules.get(name);
    if (existing) clearInterval(existing.timer);
    const schedule: Schedule = { data: structuredClone(data ?? {}), timer: setInterval(() => fire(queue, name, schedule), everyMs) };
    schedule.timer.unref();
    queue.schedules.set(name, schedule);
    // Like a BullMQ job scheduler with `every`: the first job at once, but not again on an upsert.
    if (!existing) fire(queue, name, schedule);
  }

  function fire(queue: QueueState, name: string, schedule: Schedule): void {
    // Like BullMQ, at most one job of a schedule waits at a time: no pile-up while no worker runs.
    for (const entry of queue.ready) if (entry.id.startsWith(`repeat:${name}:`)) return;
    addJob(queue, name, schedule.data, { jobId: `repeat:${name}:${Date.now()}` });
  }

  function queue(name: string): JobQueue {
    const state = stateOf(name);
    return {
      name,
      async add(jobName, data, options) {
        assertOpen();
        addJob(state, jobName, data, options);
      },
      async remove(jobId) {
        removeJob(state, jobId);
      },
      async repeat(jobName, everyMs, data) {
        assertOpen();
        repeatJob(state, jobName, everyMs, data);
      },
      async counts() {
        const counts = { waiting: 0, active: 0, delayed: 0, failed: 0 };
        for (const entry of state.entries.values()) counts[entry.state]++;
        return counts;
      },
      // Like closing a BullMQ Queue handle: the jobs and schedules stay for the workers.
      async close() {},
    };
  }

  function worker(
    queueName: string,
    processor: JobProcessor,
    options: { concurrency?: number; onFailed?: (job: Job, error: Error) => void } = {},
  ): JobWorker {
    assertOpen();
    const state = stateOf(queueName);
    const self: WorkerState = {
      processor,
      concurrency: Math.max(1, options.concurrency ?? 1),
      onFailed: options.onFailed,
      active: new Set(),
      closing: false,
    };
    state.workers.add(self);
    queueMicrotask(() => dispatch(state));
    return {
      async close() {
        self.closing = true;
        state.workers.delete(self);
        while (self.active.size > 0) await Promise.allSettled([...self.active]);
      },
    };
  }

  return {
    kind: 'in-process',
    queue,
    worker,
    async close() {
      closed = true;
      const closing: Promise<void>[] = [];
      for (const state of queues.values()) {
        for (const schedule of state.schedules.values()) clearInterval(schedule.timer);
        for (const entry of state.entries.values()) clearTimeout(entry.timer);
        for (const w of state.workers) {
          w.closing = true;
          closing.push(...w.active);
        }
      }
      await Promise.allSettled(closing);
      queues.clear();
    },
  };
}

function notifyFailed(worker: WorkerState, job: Job, error: Error): void {
  try {
    worker.onFailed?.(job, error);
  } catch {
    // A throwing listener must not take the queue down; BullMQ's worker swallows it the same way.
  }
}

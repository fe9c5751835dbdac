import type { QueueBackend, UntypedQueue } from './job-queue.ts';
import { MemoryQueue } from './memory-queue.ts';
import { MemoryWorker } from './memory-worker.ts';

/**
 * Jobs in this process's memory, with BullMQ's semantics (see job-queue.ts; each queue a MemoryQueue,
 * each worker a MemoryWorker): nothing survives a restart, which is why the engine rebuilds its
 * scheduled jobs from the database at start.
 */
export function inProcessQueues(): QueueBackend {
  const queues = new Map<string, MemoryQueue>();
  let closed = false;

  function queueOf(name: string): MemoryQueue {
    let queue = queues.get(name);
    if (!queue) {
      queue = new MemoryQueue(name);
      queues.set(name, queue);
    }
    return queue;
  }

  function assertOpen(): void {
    if (closed) throw new Error('The in-process queue backend is closed; create a new one with inProcessQueues().');
  }

  return {
    kind: 'in-process',
    // In this process's memory: up as long as the process is.
    async health() {
      return { up: true };
    },
    queue(name) {
      const queue = queueOf(name);
      const handle: UntypedQueue = {
        name,
        async add(jobName, data, options) {
          assertOpen();
          queue.add(jobName, data, options);
        },
        async remove(jobId) {
          queue.remove(jobId);
        },
        async repeat(jobName, everyMs, data) {
          assertOpen();
          queue.repeat(jobName, everyMs, data);
        },
        async counts() {
          return queue.counts();
        },
        // Like closing a BullMQ Queue handle: the jobs and schedules stay for the workers.
        async close() {},
      };
      return handle;
    },
    worker(queueName, processor, options) {
      assertOpen();
      const queue = queueOf(queueName);
      const worker = new MemoryWorker(processor, options);
      queue.attach(worker);
      return {
        async close() {
          queue.detach(worker);
          await worker.close();
        },
      };
    },
    async close() {
      closed = true;
      await Promise.allSettled([...queues.values()].map((queue) => queue.close()));
      queues.clear();
    },
  };
}

import { ENGINE_QUEUE, type EngineQueue, type EngineJob } from './engine-jobs.ts';
import { queueName, type QueueBackend, type QueueName } from './queue/job-queue.ts';

/** ENGINE_QUEUES' ceiling: every engine process holds a worker, and on BullMQ a blocking connection, per queue. */
export const MAX_ENGINE_QUEUES = 64;

/**
 * The name of engine queue `index`: the first keeps the name the single queue always had, so a
 * deployment with one queue, or one that adds more, goes on with the jobs already waiting in it.
 */
export function engineQueueName(index: number): QueueName<EngineJob> {
  return index === 0 ? ENGINE_QUEUE : queueName<EngineJob>(`${ENGINE_QUEUE}-${index}`);
}

/** The queue a device's signals go to, of `count`: always the same one while the count stays. */
export function queueIndexOf(deviceId: number, count: number): number {
  return ((deviceId % count) + count) % count;
}

/** `deviceIds` by the queue each goes to, in their order; a queue no device goes to gets an empty list. */
export function splitByQueue(deviceIds: readonly number[], count: number): number[][] {
  const groups = Array.from({ length: count }, (): number[] => []);
  for (const id of deviceIds) groups[queueIndexOf(id, count)]!.push(id);
  return groups;
}

/**
 * `total` jobs at once (ENGINE_CONCURRENCY) shared over `count` queues' workers: evenly, the first
 * queues taking the remainder (the first also holds the scheduled jobs), and at least one each, as
 * a queue without a worker would never be worked.
 */
export function concurrencyShares(total: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.max(1, Math.floor(total / count) + (i < total % count ? 1 : 0)));
}

/**
 * The engine's queues (ENGINE_QUEUES): each device's signals always go to the same one, so on a
 * Redis Cluster, where each queue lives under a hash tag of its own, the signals spread over the
 * masters. The first queue also holds what is not a device's: travel starts and the schedules.
 *
 * Which queue carries a device's signal is for spreading load only, never for correctness: a
 * signal only says "look at these devices", and the engine evaluates a device under its row lock
 * from its cursor (lockEngineStates), so jobs for one device in two queues, or left in a queue
 * that a lower count no longer works, cost a look and lose or reorder nothing.
 */
export class EngineQueues {
  readonly all: readonly EngineQueue[];

  constructor(backend: Pick<QueueBackend, 'queue'>, count = 1) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_ENGINE_QUEUES) {
      throw new RangeError(`The engine queues must number from 1 to ${MAX_ENGINE_QUEUES}, got ${count}.`);
    }
    this.all = Array.from({ length: count }, (_, i) => backend.queue(engineQueueName(i)));
  }

  /** The queue of travel starts and schedules. */
  get first(): EngineQueue {
    return this.all[0]!;
  }

  get count(): number {
    return this.all.length;
  }

  /** The index of the queue `deviceId`'s signals go to. */
  indexOf(deviceId: number): number {
    return queueIndexOf(deviceId, this.all.length);
  }

  /** One `devices` job on each queue that any of `deviceIds` goes to. */
  async signal(deviceIds: readonly number[], committedAt?: number): Promise<void> {
    const groups = splitByQueue(deviceIds, this.all.length);
    await Promise.all(groups.map((ids, i) => (ids.length === 0 ? undefined : this.signalQueue(i, ids, committedAt))));
  }

  /** A `devices` job on queue `index`, whose devices the caller took from indexOf. */
  async signalQueue(index: number, deviceIds: readonly number[], committedAt?: number): Promise<void> {
    await this.all[index]!.add('devices', { deviceIds: [...deviceIds], ...(committedAt === undefined ? {} : { committedAt }) });
  }
}

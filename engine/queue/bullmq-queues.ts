import { Queue } from 'bullmq';
import { createRedisClient, isCluster, type RedisClient, type RedisTarget } from '../../runtime/redis-client.ts';
import { BullmqQueue } from './bullmq-queue.ts';
import { BullmqSchedules } from './bullmq-schedules.ts';
import { BullmqWorker } from './bullmq-worker.ts';
import type { QueueBackend } from './job-queue.ts';
import { cachedHealth } from './queue-health.ts';
import { redisQueueHealth } from './redis-queue-health.ts';

const DEFAULT_PREFIX = 'fleetcore';

function ignore(): void {}

export interface BullmqOptions {
  /** Prefix of every key (one per deployment, so two sharing a Redis never see each other's jobs). */
  prefix?: string;
  /** How often the schedules made with repeat() are checked, and made again if Redis lost them (default 5 s). */
  scheduleCheckMs?: number;
  /** Told each time a lost schedule was made again. */
  onScheduleRestored?: (queue: string, jobName: string) => void;
  /** health(): how long Redis has to take the probe's write (default 1 s), and how long an answer is reused (default 2 s). */
  healthTimeoutMs?: number;
  healthCacheMs?: number;
}

/** QUIT lets pending replies arrive; a connection that is not up has nothing pending, and QUIT would wait for it. */
async function closeConnection(connection: RedisClient): Promise<void> {
  if (connection.status === 'ready') await connection.quit();
  else connection.disconnect();
}

/**
 * Queues and workers over BullMQ on Redis: jobs survive restarts and every engine process shares them.
 * All queues (BullmqQueue) share one connection (commands fail after ioredis's retries, so an add
 * during a Redis outage rejects instead of hanging); all workers (BullmqWorker) share another with
 * `maxRetriesPerRequest: null`, as BullMQ requires, and each worker adds the blocking connection
 * BullMQ duplicates from it. The schedules made with repeat() are kept alive by BullmqSchedules.
 * health() writes one short-lived key (`<prefix>:queue-probe`) through the queues' connection; on a
 * cluster, one in each opened queue's slot.
 * `redis`: REDIS_URL, or a Redis Cluster, on which each queue's keys carry the hash tag `{<prefix>:<queue>}`.
 */
export function bullmqQueues(redis: string | RedisTarget, options: BullmqOptions = {}): QueueBackend {
  const target = typeof redis === 'string' ? { url: redis } : redis;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  // Redis errors reach BullMQ's listeners; ours only keep ioredis from printing "Unhandled error event".
  const queueConnection = createRedisClient(target).on('error', ignore);
  const workerConnection = createRedisClient(target, { maxRetriesPerRequest: null }).on('error', ignore);
  // On a cluster each queue's keys must share one slot, as BullMQ's Lua scripts touch several at once:
  // a hash tag per queue does it, and spreads the queues over the masters rather than all on one.
  const prefixOf = isCluster(queueConnection) ? (queue: string) => `{${prefix.replace(/[{}]/g, '')}:${queue}}` : () => prefix;
  const queues = new Map<string, BullmqQueue>();
  const workers = new Set<BullmqWorker>();
  const schedules = new BullmqSchedules(queueConnection, options.scheduleCheckMs ?? 5_000, options.onScheduleRestored);
  const healthTimeoutMs = options.healthTimeoutMs ?? 1_000;
  // On a cluster each queue has a master of its own, so each opened queue's slot is probed (in parallel,
  // the first failure answers); on one Redis, one key tells for all.
  const probeKeys = (): string[] =>
    isCluster(queueConnection) && queues.size > 0 ? [...queues.keys()].map((name) => `${prefixOf(name)}:queue-probe`) : [`${prefix}:queue-probe`];
  const probe = async () => {
    const answers = await Promise.all(probeKeys().map((key) => redisQueueHealth(queueConnection, key, healthTimeoutMs)));
    return answers.find((a) => !a.up) ?? answers[0]!;
  };
  const health = cachedHealth(probe, options.healthCacheMs ?? 2_000);

  return {
    kind: 'bullmq',
    health,
    queue(name) {
      const existing = queues.get(name);
      if (existing) return existing;
      const bull = new Queue(name, { connection: queueConnection, prefix: prefixOf(name) });
      bull.on('error', ignore);
      const queue = new BullmqQueue(name, bull, schedules, () => queues.delete(name));
      queues.set(name, queue);
      return queue;
    },
    worker(queueName, processor, workerOptions = {}) {
      const worker: BullmqWorker = new BullmqWorker(queueName, processor, workerOptions, { connection: workerConnection, prefix: prefixOf(queueName) }, () => workers.delete(worker));
      workers.add(worker);
      return worker;
    },
    async close() {
      schedules.close();
      await Promise.allSettled([...workers].map((w) => w.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.closeQueue()));
      workers.clear();
      queues.clear();
      await Promise.allSettled([queueConnection, workerConnection].map(closeConnection));
    },
  };
}

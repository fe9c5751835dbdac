import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisClusterProcess } from '../../test/faults/redis-cluster-process.ts';
import { eventually } from '../../test/support/eventually.ts';
import { bullmqQueues } from './bullmq-queues.ts';
import type { QueueBackend } from './job-queue.ts';

// health() of the BullMQ backend on a 3-master Redis Cluster without replicas, whose other masters go
// on serving their slots when one stops (cluster-require-full-coverage no): each queue lives on one
// master, so the stopped master of one queue must show in health() while the rest still answer.
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
let cluster: RedisClusterProcess;
let backend: QueueBackend | undefined;

beforeAll(async () => {
  if (!redisServerInstalled) return;
  cluster = new RedisClusterProcess(3, 0, ['--cluster-require-full-coverage', 'no']);
  await cluster.start();
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await cluster?.stop();
});

describe.skipIf(!redisServerInstalled)(`bullmq health on a Redis Cluster${redisServerInstalled ? '' : ' (skipped: redis-server is not installed)'}`, () => {
  it('is down once the master of any opened queue stops', async () => {
    backend = bullmqQueues({ cluster: cluster.settings }, { prefix: 'fc-health', healthCacheMs: 0, healthTimeoutMs: 500 });
    const admin = new Redis(cluster.nodes[0]!.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    const slots = await admin.cluster('SLOTS');
    const masterPort = async (key: string) => {
      const slot = Number(await admin.cluster('KEYSLOT', key));
      return slots.find(([from, to]) => slot >= from && slot <= to)![2]![1];
    };
    // A queue on another master than the key a single probe would write, so only a probe of each queue's slot sees it.
    const single = await masterPort('fc-health:queue-probe');
    let queue = '';
    for (let i = 0; !queue; i++) if ((await masterPort(`{fc-health:q${i}}`)) !== single) queue = `q${i}`;
    const port = await masterPort(`{fc-health:${queue}}`);
    admin.disconnect();
    backend.queue('engine');
    backend.queue(queue);
    expect(await backend.health()).toEqual({ up: true });

    await cluster.nodes.find((n) => n.port === port)!.stop();
    await eventually(() => backend!.health(), (health) => expect(health).toMatchObject({ up: false, reason: 'unreachable' }), 15_000);
  }, 60_000);
});

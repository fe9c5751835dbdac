import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServerProcess } from '../../test/faults/redis-server-process.ts';
import { freePort } from '../../test/support/fleet-process.ts';
import { bullmqQueues } from './bullmq-queues.ts';
import { cachedHealth, type QueueHealth } from './queue-health.ts';
import { redisQueueHealth } from './redis-queue-health.ts';

describe('cachedHealth', () => {
  it('asks once per ttl, so callers within it share one answer', async () => {
    let clock = 0;
    let asked = 0;
    const health = cachedHealth(async (): Promise<QueueHealth> => ({ up: ++asked % 2 === 1 }) as QueueHealth, 2_000, () => clock);
    expect(await health()).toEqual({ up: true });
    clock = 1_999;
    expect(await health()).toEqual({ up: true });
    expect(asked).toBe(1);
    clock = 2_000;
    expect((await health()).up).toBe(false);
    expect(asked).toBe(2);
  });
});

// Redis servers of this file's own, on ports of their own: one that takes writes, its replica, one
// out of memory, and one stopped under a connected client. The shared Redis is never touched.
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;

describe.skipIf(!redisServerInstalled)(`redisQueueHealth${redisServerInstalled ? '' : ' (skipped: redis-server is not installed)'}`, () => {
  let primary: RedisServerProcess;
  let replica: RedisServerProcess;
  let full: RedisServerProcess;
  let dir: string | undefined;
  const clients: Redis[] = [];

  async function client(server: RedisServerProcess): Promise<Redis> {
    const redis = new Redis(server.url, { lazyConnect: true }).on('error', () => undefined);
    clients.push(redis);
    await redis.connect();
    return redis;
  }

  beforeAll(async () => {
    primary = new RedisServerProcess(await freePort());
    await primary.start();
    // --dir: a replica writes the copy it receives to disk, which belongs in a directory of the test's own.
    dir = mkdtempSync(join(tmpdir(), 'fleetcore-redis-health-'));
    replica = new RedisServerProcess(await freePort(), ['--replicaof', '127.0.0.1', String(primary.port), '--dir', dir]);
    // A limit below what an empty Redis holds: every write is refused, as in a Redis that filled up.
    full = new RedisServerProcess(await freePort(), ['--maxmemory', '1', '--maxmemory-policy', 'noeviction']);
    await Promise.all([replica.start(), full.start()]);
  });

  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    await Promise.allSettled([replica?.stop(), full?.stop(), primary?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is up on a Redis that takes writes, and leaves only a key that expires', async () => {
    const redis = await client(primary);
    expect(await redisQueueHealth(redis, 'fc-probe-test:queue-probe', 1_000)).toEqual({ up: true });
    const ttl = await redis.pttl('fc-probe-test:queue-probe');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('says read-only on a replica, which answers PING but refuses writes', async () => {
    const redis = await client(replica);
    expect(await redis.ping()).toBe('PONG');
    expect(await redisQueueHealth(redis, 'probe', 1_000)).toMatchObject({ up: false, reason: 'read-only', detail: expect.stringMatching(/^READONLY/) });
  });

  it('says out of memory when Redis is past maxmemory and evicts nothing', async () => {
    const redis = await client(full);
    expect(await redisQueueHealth(redis, 'probe', 1_000)).toMatchObject({ up: false, reason: 'out of memory', detail: expect.stringMatching(/^OOM/) });
  });

  it('says unreachable within the timeout when Redis holds writes without answering', async () => {
    const redis = await client(primary);
    const admin = await client(primary);
    await admin.call('CLIENT', 'PAUSE', '3000', 'WRITE');
    try {
      const started = Date.now();
      const health = await redisQueueHealth(redis, 'probe', 300);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(health).toMatchObject({ up: false, reason: 'unreachable', detail: 'Redis did not answer in 300 ms' });
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
    }
  });

  it('says unreachable at once when Redis is gone, and up again once it is back (through the BullMQ backend)', async () => {
    const own = new RedisServerProcess(await freePort());
    await own.start();
    const queues = bullmqQueues(own.url, { prefix: 'fc-probe-test', healthCacheMs: 100, healthTimeoutMs: 3_000 });
    try {
      await expect.poll(() => queues.health(), { timeout: 5_000 }).toEqual({ up: true });
      await own.shutdownNosave();
      await expect.poll(() => queues.health(), { timeout: 5_000 }).toMatchObject({ up: false, reason: 'unreachable' });
      // A disconnected client is not asked: the answer does not wait for the timeout.
      await new Promise((r) => setTimeout(r, 150));
      const started = Date.now();
      expect((await queues.health()).up).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_000);
      await own.start();
      await expect.poll(() => queues.health(), { timeout: 10_000 }).toEqual({ up: true });
    } finally {
      await queues.close();
      await own.stop();
    }
  });
});

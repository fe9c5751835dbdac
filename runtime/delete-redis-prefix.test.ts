import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { RedisClusterProcess } from '../test/faults/redis-cluster-process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRedisPrefix } from './delete-redis-prefix.ts';

describe.skipIf(!process.env.REDIS_URL)('deleteRedisPrefix', () => {
  const redisUrl = process.env.REDIS_URL!;
  const base = `fc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    const left = await redis.keys(`${base}*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  });

  async function set(keys: string[]): Promise<void> {
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.set(key, '1');
    await pipeline.exec();
  }

  it('deletes every key under prefix:, over more than one SCAN page, and nothing beside it', async () => {
    const prefix = `${base}-a`;
    await set(Array.from({ length: 2_500 }, (_, i) => `${prefix}:${i % 2 === 0 ? 'bull:engine' : 'event-streams'}:${i}`));
    await set([prefix, `${prefix}-other:1`, `${base}-b:1`]);
    await deleteRedisPrefix(redisUrl, prefix);
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    expect((await redis.keys(`${base}*`)).sort()).toEqual([prefix, `${prefix}-other:1`, `${base}-b:1`].sort());
  });

  it('reads glob characters in the prefix as themselves', async () => {
    await set([`${base}-c*:1`, `${base}-cd:1`, `${base}-c?:1`]);
    await deleteRedisPrefix(redisUrl, `${base}-c*`);
    expect((await redis.keys(`${base}-c*`)).sort()).toEqual([`${base}-c?:1`, `${base}-cd:1`].sort());
  });

  it('fails, rather than doing nothing, when Redis does not answer', async () => {
    await expect(deleteRedisPrefix('redis://127.0.0.1:1', base)).rejects.toThrow();
  });
});

const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
describe.skipIf(!redisServerInstalled)(`deleteRedisPrefix on a Redis Cluster${redisServerInstalled ? '' : ' (skipped: redis-server is not installed)'}`, () => {
  const cluster = new RedisClusterProcess(3);
  let redis: Cluster;
  beforeAll(async () => {
    await cluster.start();
    redis = new Cluster(cluster.settings.nodes);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster.stop();
  });

  async function keysOnEveryMaster(): Promise<string[]> {
    const all: string[] = [];
    for (const node of redis.nodes('master')) all.push(...(await node.keys('*')));
    return all.sort();
  }

  it('deletes the prefix\'s keys on every master, hash-tagged or not, and nothing beside them', async () => {
    const doomed = [
      ...Array.from({ length: 300 }, (_, i) => `fc:${i}`), // spread over every master
      '{fc}:event-streams:key-1',
      '{fc:fleetcore-engine}:fleetcore-engine:wait',
      '{fc:fleetcore-webhooks}:fleetcore-webhooks:meta',
    ];
    const kept = ['fc-other:1', '{fc-other}:1', 'fc'];
    for (const key of [...doomed, ...kept]) await redis.set(key, '1');
    for (const node of redis.nodes('master')) expect((await node.keys('fc:*')).length).toBeGreaterThan(0);
    await deleteRedisPrefix({ cluster: cluster.settings }, 'fc');
    expect(await keysOnEveryMaster()).toEqual([...kept].sort());
  });
});

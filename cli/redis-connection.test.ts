import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServerProcess } from '../test/faults/redis-server-process.ts';
import { freePort } from '../test/support/fleet-process.ts';
import { startupRefusal } from '../test/support/startup-refusal.ts';
import { connectRedis } from './redis-connection.ts';

// connectRedis against redis-servers of this file's own: what it returns, what it refuses, and that a
// refused connection is closed. (test/redis-requirements.test.ts runs `fleet serve` on the same kinds.)
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
let dir: string;
let standalone: RedisServerProcess;
let clusterNode: RedisServerProcess;

const startupError = (url: string) => startupRefusal(connectRedis(url));

async function clientCount(server: RedisServerProcess): Promise<number> {
  const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    return ((await admin.client('LIST')) as string).trim().split('\n').length - 1; // less this one
  } finally {
    admin.disconnect();
  }
}

beforeAll(async () => {
  if (!redisServerInstalled) return;
  dir = mkdtempSync(join(tmpdir(), 'fleetcore-redis-connection-'));
  standalone = new RedisServerProcess(await freePort());
  clusterNode = new RedisServerProcess(await freePort(), ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')]);
  await Promise.all([standalone.start(), clusterNode.start()]);
  // A user that may do everything but ask INFO, as some hosted Redis services set theirs up.
  const admin = new Redis(standalone.url, { maxRetriesPerRequest: 1 });
  await admin.call('ACL', 'SETUSER', 'noinfo', 'on', '>pw', '~*', '&*', '+@all', '-info');
  admin.disconnect();
});

afterAll(async () => {
  await Promise.allSettled([standalone?.stop(), clusterNode?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!redisServerInstalled)(`connectRedis${redisServerInstalled ? '' : ' (skipped: redis-server is not installed)'}`, () => {
  it('returns a connection that answers, on a standalone Redis', async () => {
    const redis = await connectRedis(standalone.url);
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a Redis Cluster node with one line, and leaves no connection open', async () => {
    expect(await startupError(clusterNode.url)).toMatch(/^REDIS_URL redis:\/\/127\.0\.0\.1:\d+ names a node of a Redis Cluster/);
    await expect.poll(() => clientCount(clusterNode)).toBe(0);
  });

  it('refuses a Redis that will not answer INFO, which the queues need too', async () => {
    const message = await startupError(`redis://noinfo:pw@127.0.0.1:${standalone.port}`);
    expect(message).toMatch(/^REDIS_URL redis:\/\/noinfo:\*\*\*@127\.0\.0\.1:\d+\/? does not answer INFO, which the queues need: NOPERM/);
    expect(message).not.toContain(':pw@');
  });

  it('refuses a Redis that does not answer', async () => {
    expect(await startupError(`redis://127.0.0.1:${await freePort()}`)).toMatch(/^cannot connect to REDIS_URL redis:\/\/127\.0\.0\.1:\d+\/?: .*ECONNREFUSED/);
  });
});

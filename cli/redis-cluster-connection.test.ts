import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisClusterProcess } from '../test/faults/redis-cluster-process.ts';
import { RedisServerProcess } from '../test/faults/redis-server-process.ts';
import { freePort } from '../test/support/fleet-process.ts';
import { startupRefusal } from '../test/support/startup-refusal.ts';
import type { RedisClusterSettings } from '../runtime/redis-client.ts';
import { connectRedisCluster } from './redis-connection.ts';

// connectRedisCluster against a 3-master Redis Cluster of this file's own, and against a cluster-enabled
// node that serves no slot (cluster_state:fail): what it returns and what it refuses.
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
const SKIPPED = redisServerInstalled ? '' : ' (skipped: redis-server is not installed; apt-get install redis-server)';
let cluster: RedisClusterProcess;
let lonelyNode: RedisServerProcess;
let standalone: RedisServerProcess;
let dir: string;

function nodes(...ports: number[]): RedisClusterSettings {
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), password: undefined };
}

const startupError = (settings: RedisClusterSettings) => startupRefusal(connectRedisCluster(settings));

beforeAll(async () => {
  if (!redisServerInstalled) return;
  dir = mkdtempSync(join(tmpdir(), 'fleetcore-redis-cluster-connection-'));
  cluster = new RedisClusterProcess(3);
  lonelyNode = new RedisServerProcess(await freePort(), ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')]);
  standalone = new RedisServerProcess(await freePort());
  await Promise.all([cluster.start(), lonelyNode.start(), standalone.start()]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([cluster?.stop(), lonelyNode?.stop(), standalone?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!redisServerInstalled)(`connectRedisCluster${SKIPPED}`, () => {
  it('returns a cluster client that reaches every master, from one node named', async () => {
    const redis = await connectRedisCluster(nodes(cluster.nodes[0]!.port));
    try {
      // Keys in every slot range answer: the client follows the slots to each master.
      for (let i = 0; i < 30; i++) await redis.set(`fc-test:${i}`, String(i));
      expect(await redis.get('fc-test:29')).toBe('29');
      expect(redis.nodes('master')).toHaveLength(3);
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a cluster that does not serve every slot (cluster_state:fail)', async () => {
    expect(await startupError(nodes(lonelyNode.port))).toBe(
      `REDIS_CLUSTER_NODES 127.0.0.1:${lonelyNode.port} is a Redis Cluster in cluster_state:fail (not every slot is served); fix the cluster (redis-cli --cluster check) before starting`,
    );
  });

  it('refuses a standalone Redis, pointing to REDIS_URL', async () => {
    expect(await startupError(nodes(standalone.port))).toBe(
      `REDIS_CLUSTER_NODES 127.0.0.1:${standalone.port}: 127.0.0.1:${standalone.port} is a standalone Redis, not a Redis Cluster node; point REDIS_URL at it instead`,
    );
  });

  it('refuses nodes that do not answer', async () => {
    const port = await freePort();
    expect(await startupError(nodes(port))).toMatch(new RegExp(`^cannot connect to REDIS_CLUSTER_NODES 127\\.0\\.0\\.1:${port}: `));
  });
});

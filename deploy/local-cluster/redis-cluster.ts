import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ClusterLayout } from './cluster-layout.ts';
import { isRunning, readPid, sleep, stopProcess } from './pid-file.ts';
import { run } from './postgres-user.ts';

// A Redis Cluster of 3 masters, each with a replica: six daemonized redis-servers (append-only file on,
// so queues survive `down` and `up`), joined once with `redis-cli --cluster create`.

const nodeDir = (layout: ClusterLayout, port: number) => join(layout.paths.redis, String(port));
const pidFile = (layout: ClusterLayout, port: number) => join(nodeDir(layout, port), 'redis.pid');
/** Written once the cluster is made: after that its nodes find each other again from their nodes.conf. */
const createdMarker = (layout: ClusterLayout) => join(layout.paths.redis, 'cluster-created');

/** REDIS_CLUSTER_NODES: the masters are enough; fleet learns the rest from them. */
export function redisClusterNodes(layout: ClusterLayout): string {
  return layout.redisPorts.map((port) => `127.0.0.1:${port}`).join(',');
}

export function redisNodeRunning(layout: ClusterLayout, port: number): boolean {
  return isRunning(readPid(pidFile(layout, port)), 'redis-server');
}

export async function startRedisCluster(layout: ClusterLayout): Promise<void> {
  for (const [i, port] of layout.redisPorts.entries()) {
    if (redisNodeRunning(layout, port)) continue;
    const dir = nodeDir(layout, port);
    mkdirSync(dir, { recursive: true });
    await run('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'yes',
      '--pidfile', pidFile(layout, port), '--logfile', join(dir, 'redis.log'), '--dir', dir,
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(layout.redisBusPorts[i]), '--cluster-node-timeout', '2000',
      '--appendonly', 'yes', '--save', '',
    ]);
  }
  await Promise.all(layout.redisPorts.map((port) => waitForPing(port, join(nodeDir(layout, port), 'redis.log'))));
  if (!existsSync(createdMarker(layout))) {
    await run('redis-cli', ['--cluster', 'create', ...layout.redisPorts.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], { timeoutMs: 60_000 });
    writeFileSync(createdMarker(layout), `${new Date().toISOString()}\n`);
  }
  await waitUntilClusterOk(layout);
}

export async function stopRedisCluster(layout: ClusterLayout): Promise<void> {
  // SIGTERM: each node writes its append-only file and exits.
  await Promise.all(layout.redisPorts.map((port) => stopProcess(pidFile(layout, port), 'redis-server')));
}

/** A question to one Redis node of the cluster, on a connection of its own that gives up at once. */
export async function askRedis<T>(port: number, question: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await question(client);
  } finally {
    client.disconnect();
  }
}

async function waitForPing(port: number, log: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await askRedis(port, (c) => c.ping()).catch(() => undefined))) {
    if (Date.now() > deadline) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n') : '(no log)';
      throw new Error(`redis-server on port ${port} did not answer in ${timeoutMs} ms; its log ends:\n${tail}`);
    }
    await sleep(50);
  }
}

/** Until every running node says cluster_state:ok (all slots served). */
export async function waitUntilClusterOk(layout: ClusterLayout, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = layout.redisPorts.filter((port) => redisNodeRunning(layout, port));
    const states = await Promise.all(running.map((port) => askRedis(port, (c) => c.cluster('INFO')).then(String, () => '')));
    if (running.length > 0 && states.every((s) => /cluster_state:ok/.test(s))) return;
    if (Date.now() > deadline) throw new Error(`the Redis Cluster did not reach cluster_state:ok in ${timeoutMs} ms (logs: ${layout.paths.redis}/*/redis.log)`);
    await sleep(200);
  }
}

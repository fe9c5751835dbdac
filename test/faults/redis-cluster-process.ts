import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { RedisClusterSettings } from '../../runtime/redis-client.ts';
import { freePort } from '../support/fleet-process.ts';
import { RedisServerProcess } from './redis-server-process.ts';

const run = promisify(execFile);

/**
 * Why a suite that runs `fleet serve` on a Redis Cluster of its own is skipped here, as a title's
 * suffix; empty when it can run.
 */
export function redisClusterSuiteSkipped(): string {
  if (!process.env.DATABASE_URL) return ' (skipped: set DATABASE_URL; the embedded database cannot share Redis)';
  if (spawnSync('redis-server', ['--version']).status !== 0) return ' (skipped: redis-server is not installed; apt-get install redis-server)';
  return '';
}

/**
 * A Redis Cluster of a suite's own: `masters` redis-servers (and as many replicas, one per master,
 * when `replicas` is 1) on free ports, joined with `redis-cli --cluster create`, in a directory of its
 * own for the nodes' cluster files. No persistence; stop() shuts every node down and removes the files.
 */
export class RedisClusterProcess {
  readonly nodes: RedisServerProcess[] = [];
  private dir: string | undefined;

  /** `args`: more of each node's redis-server options (`--cluster-require-full-coverage no` …). */
  constructor(
    private readonly masters = 3,
    private readonly replicas: 0 | 1 = 0,
    private readonly args: readonly string[] = [],
    /** Every node's requirepass and masterauth, as REDIS_PASSWORD names it. */
    readonly password?: string,
  ) {}

  /** REDIS_CLUSTER_NODES for this cluster. */
  get nodesVariable(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  get settings(): RedisClusterSettings {
    return { nodes: this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), password: this.password };
  }

  async start(): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcore-redis-cluster-'));
    this.dir = dir;
    const count = this.masters * (1 + this.replicas);
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      this.nodes.push(new RedisServerProcess(port, ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, '--cluster-node-timeout', '2000', ...this.args], this.password));
    }
    await Promise.all(this.nodes.map((n) => n.start()));
    const addresses = this.nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', [...(this.password ? ['--no-auth-warning', '-a', this.password] : []), '--cluster', 'create', ...addresses, '--cluster-replicas', String(this.replicas), '--cluster-yes'], { timeout: 30_000 });
    await this.waitUntilOk();
  }

  /** Until every node (but those `stopped`) says cluster_state:ok: after a master stopped, once its replica took over. */
  async waitUntilOk(timeoutMs = 30_000, stopped: readonly RedisServerProcess[] = []): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const running = this.nodes.filter((n) => !stopped.includes(n));
    for (;;) {
      const states = await Promise.all(running.map((n) => this.clusterInfo(n.port).catch(() => '')));
      if (states.every((s) => /cluster_state:ok/.test(s))) return;
      if (Date.now() > deadline) throw new Error(`the Redis Cluster did not reach cluster_state:ok in ${timeoutMs} ms:\n${states.join('\n')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.nodes.map((n) => n.stop()));
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  private async clusterInfo(port: number): Promise<string> {
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500, ...(this.password ? { password: this.password } : {}) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return String(await client.cluster('INFO'));
    } finally {
      client.disconnect();
    }
  }
}

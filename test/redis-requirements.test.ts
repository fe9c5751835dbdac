import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServerProcess } from './faults/redis-server-process.ts';
import { eventually } from './support/eventually.ts';
import { environment, FLEET, freePort, freshDatabase, root, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.ts';

// `fleet serve` against Redis servers of this file's own, on ports of their own: a standalone
// primary, a replica of it, a single Redis Cluster node, and one that evicts keys when full. The
// three that cannot hold the queues are refused with one line; on the primary the server starts, and
// its /readyz and fleetcore_queue_up follow the primary going away and coming back.

const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
const SKIPPED = redisServerInstalled ? '' : ' (skipped: redis-server is not installed; apt-get install redis-server)';

let dir: string;
let fresh: FreshDatabase;
const redis: Record<'primary' | 'replica' | 'cluster' | 'evicting', RedisServerProcess> = {} as never;
let server: Serving | undefined;

beforeAll(async () => {
  if (!redisServerInstalled) return;
  dir = mkdtempSync(join(tmpdir(), 'fleetcore-redis-'));
  redis.primary = new RedisServerProcess(await freePort());
  await redis.primary.start();
  // --dir: a replica writes the copy it receives to disk, which belongs in the test's directory.
  redis.replica = new RedisServerProcess(await freePort(), ['--replicaof', '127.0.0.1', String(redis.primary.port), '--dir', dir]);
  redis.cluster = new RedisServerProcess(await freePort(), ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')]);
  redis.evicting = new RedisServerProcess(await freePort(), ['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru']);
  await Promise.all([redis.replica.start(), redis.cluster.start(), redis.evicting.start()]);
  fresh = await freshDatabase();
});

afterAll(async () => {
  if (server) {
    server.process.kill('SIGTERM');
    await server.exited;
  }
  await Promise.allSettled(Object.values(redis).map((r) => r?.stop()));
  await fresh?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function fleetServe(redisUrl: string, args: string[] = []): Promise<Run> {
  const env = environment({ ...fresh.env, REDIS_URL: redisUrl, PORT: '0', DEMO_SEED: 'false' });
  return new Promise((done) => {
    execFile(process.execPath, [FLEET, 'serve', ...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = (error as (Error & { code?: unknown }) | null)?.code;
      done({ code: error ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
    });
  });
}

/** A start refused with exit 1 and nothing on stderr but `fleet serve: ` and `line`. */
function expectRefused(run: Run, line: string) {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(1);
  expect(run.stderr).toBe(`fleet serve: ${line}\n`);
  expect(run.stdout).not.toMatch(/listening|running/);
}

describe.skipIf(!redisServerInstalled)(`fleet serve refuses a Redis that cannot hold its queues${SKIPPED}`, () => {
  it('a node of a Redis Cluster', async () => {
    expectRefused(
      await fleetServe(redis.cluster.url),
      `REDIS_URL ${redis.cluster.url} names a node of a Redis Cluster, which REDIS_URL cannot reach as a whole; name its nodes in REDIS_CLUSTER_NODES instead (e.g. REDIS_CLUSTER_NODES=host1:6379,host2:6379,host3:6379) and unset REDIS_URL`,
    );
  });

  it('a read-only replica, naming its master', async () => {
    expectRefused(
      await fleetServe(redis.replica.url),
      `REDIS_URL ${redis.replica.url} names a read-only replica of ${redis.primary.url}: it refuses the writes the queues make; point REDIS_URL at the primary`,
    );
  });

  it('a Redis that evicts keys when full', async () => {
    expectRefused(
      await fleetServe(redis.evicting.url),
      `REDIS_URL ${redis.evicting.url} evicts keys when full (maxmemory 100.00M, maxmemory-policy allkeys-lru), and an evicted queue key is a job lost with its events; set maxmemory-policy noeviction on it, or give fleetcore a Redis of its own`,
    );
  });

  it.runIf(process.env.DATABASE_URL)('once, with --processes, instead of in every copy', async () => {
    expectRefused(
      await fleetServe(redis.cluster.url, ['--processes', '2']),
      `REDIS_URL ${redis.cluster.url} names a node of a Redis Cluster, which REDIS_URL cannot reach as a whole; name its nodes in REDIS_CLUSTER_NODES instead (e.g. REDIS_CLUSTER_NODES=host1:6379,host2:6379,host3:6379) and unset REDIS_URL`,
    );
  });
});

describe.skipIf(!redisServerInstalled)(`fleet serve on a standalone Redis${SKIPPED}`, () => {
  const readyz = async () => {
    const response = await fetch(`${server!.url}/readyz`);
    return { status: response.status, body: await response.text() };
  };
  const queueUp = async () => {
    const samples = parsePrometheusText(await (await fetch(`${server!.url}/metrics`)).text());
    return { engine: sampleValue(samples, 'fleetcore_queue_up', { queue: 'fleetcore-engine' }), webhooks: sampleValue(samples, 'fleetcore_queue_up', { queue: 'fleetcore-webhooks' }) };
  };

  it('starts, and /readyz and fleetcore_queue_up say when its queues stop taking jobs and when they take them again', async () => {
    server = await serve({ ...fresh.env, REDIS_URL: redis.primary.url, PORT: '0', DEMO_SEED: 'false' });
    expect(await readyz()).toEqual({ status: 200, body: JSON.stringify({ status: 'ready' }) });
    expect(await queueUp()).toEqual({ engine: 1, webhooks: 1 });

    await redis.primary.shutdownNosave();
    const down = await eventually(readyz, (r) => expect(r.status).toBe(503));
    expect(JSON.parse(down.body)).toEqual({ status: 'not ready', reason: 'queue unreachable' });
    expect(down.body).not.toContain(String(redis.primary.port)); // the reason names no host or port
    await eventually(queueUp, (up) => expect(up).toEqual({ engine: 0, webhooks: 0 }));

    await redis.primary.start();
    await eventually(readyz, (r) => expect(r).toEqual({ status: 200, body: JSON.stringify({ status: 'ready' }) }));
    await eventually(queueUp, (up) => expect(up).toEqual({ engine: 1, webhooks: 1 }));
    expect(server.process.exitCode).toBeNull();
  }, 240_000);
});

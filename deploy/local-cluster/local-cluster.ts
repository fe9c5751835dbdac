import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ClusterLayout } from './cluster-layout.ts';
import { fleetNodePid, fleetNodes, migrateDatabase, startFleetNode, stopFleetNode } from './fleet-nodes.ts';
import { haproxyRunning, haproxyServers, startHaproxy, stopHaproxy } from './haproxy.ts';
import { sleep } from './pid-file.ts';
import { pgbouncerRunning, PGBOUNCER, startPgbouncer, stopPgbouncer } from './pgbouncer.ts';
import { PG_BIN, postgresRunning, startPostgresPair, stopPostgresPair } from './postgres-pair.ts';
import { redisNodeRunning, startRedisCluster, stopRedisCluster } from './redis-cluster.ts';

// The local cluster as a whole: `up` starts what is not running yet (so it is safe to run again, and
// brings back a part that crashed), `down` stops whatever of it still runs, and `status` says which.

/** The programs `up` needs, each with the Debian package that has it. */
export function missingPrograms(): string[] {
  const found = (file: string, args: string[]) => spawnSync(file, args).status === 0;
  return [
    ...(found('redis-server', ['--version']) && found('redis-cli', ['--version']) ? [] : ['redis-server and redis-cli (apt-get install redis-server)']),
    ...(existsSync(join(PG_BIN, 'initdb')) ? [] : [`PostgreSQL 15 in ${PG_BIN} (apt-get install postgresql-15 postgresql-15-postgis-3)`]),
    ...(existsSync(PGBOUNCER) ? [] : [`${PGBOUNCER} (apt-get install pgbouncer)`]),
    ...(found('haproxy', ['-v']) ? [] : ['haproxy (apt-get install haproxy)']),
  ];
}

const stateFile = (layout: ClusterLayout) => join(layout.dir, 'cluster.json');

/** The port base is the cluster's for its life: its Redis nodes know each other by port. */
function claimDirectory(layout: ClusterLayout): void {
  if (existsSync(stateFile(layout))) {
    const { portBase } = JSON.parse(readFileSync(stateFile(layout), 'utf8')) as { portBase: number };
    if (portBase !== layout.portBase) {
      throw new Error(`${layout.dir} holds a cluster on port base ${portBase}, not ${layout.portBase}: set LOCAL_CLUSTER_PORT_BASE=${portBase}, or run down --purge first`);
    }
    return;
  }
  mkdirSync(layout.dir, { recursive: true });
  writeFileSync(stateFile(layout), `${JSON.stringify({ portBase: layout.portBase, created: new Date().toISOString() })}\n`);
}

export interface UpOptions {
  /** More of the fleet nodes' environment (GEOCODER, COMMAND_SWEEP_S …), over the caller's. */
  fleetEnv?: Record<string, string>;
  /** One line per step, as it goes. */
  progress?: (line: string) => void;
}

export async function up(layout: ClusterLayout, options: UpOptions = {}): Promise<void> {
  const missing = missingPrograms();
  if (missing.length > 0) throw new Error(`the local cluster needs ${missing.join('; ')}`);
  const progress = options.progress ?? (() => undefined);
  claimDirectory(layout);
  await checkPortsFree(layout);
  progress(`Redis Cluster on ${layout.redisPorts.join(', ')}; PostgreSQL primary on ${layout.postgresPrimaryPort}, replica on ${layout.postgresReplicaPort}`);
  await Promise.all([startRedisCluster(layout), startPostgresPair(layout)]);
  progress(`PgBouncer on ${layout.pgbouncerPort}`);
  await startPgbouncer(layout);
  progress('fleet migrate');
  await migrateDatabase(layout, options.fleetEnv);
  const nodes = fleetNodes();
  progress(`fleet nodes: ${nodes.map((n) => n.name).join(', ')}`);
  await Promise.all(nodes.map((node) => startFleetNode(layout, node, options.fleetEnv)));
  progress(`HAProxy on ${layout.apiPort} (API), ${layout.trackers[0]!.public}… (trackers), ${layout.statsPort} (statistics)`);
  await startHaproxy(layout);
  await waitUntilServed(layout);
}

/** Until HAProxy counts every API and ingest node up (checks every second, up after two). */
async function waitUntilServed(layout: ClusterLayout, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const down = (await haproxyServers(layout).catch(() => [])).filter((s) => s.status !== 'UP' && s.backend !== 'stats');
    const response = await fetch(`http://127.0.0.1:${layout.apiPort}/readyz`).catch(() => undefined);
    if (down.length === 0 && response?.status === 200) return;
    if (Date.now() > deadline) {
      throw new Error(`HAProxy does not count every node up after ${timeoutMs} ms: ${down.map((s) => `${s.backend}/${s.server} ${s.status}`).join(', ') || `GET /readyz answered ${response?.status}`}`);
    }
    await sleep(250);
  }
}

/** Stops what runs, front to back; `purge` then deletes the directory (data, logs, configuration). */
export async function down(layout: ClusterLayout, options: { purge?: boolean } = {}): Promise<void> {
  await stopHaproxy(layout);
  await Promise.all(fleetNodes().map((node) => stopFleetNode(layout, node)));
  await stopPgbouncer(layout);
  await Promise.all([stopPostgresPair(layout), stopRedisCluster(layout)]);
  if (options.purge) rmSync(layout.dir, { recursive: true, force: true });
}

export interface PartStatus {
  part: string;
  /** The ports it listens on; the first is the one to show. */
  ports: number[];
  running: boolean;
}

export function status(layout: ClusterLayout): PartStatus[] {
  const nodePorts = (role: string, index: number): number[] =>
    role === 'api' ? [layout.apiNodePorts[index]!] : role === 'ingest' ? layout.trackers.map((t) => t.nodes[index]!) : [];
  return [
    ...layout.redisPorts.map((port, i) => ({ part: `redis-${i + 1}${i < layout.redisPorts.length / 2 ? '' : ' (replica at start)'}`, ports: [port, layout.redisBusPorts[i]!], running: redisNodeRunning(layout, port) })),
    { part: 'postgres-primary', ports: [layout.postgresPrimaryPort], running: postgresRunning(layout, 'primary') },
    { part: 'postgres-replica', ports: [layout.postgresReplicaPort], running: postgresRunning(layout, 'replica') },
    { part: 'pgbouncer', ports: [layout.pgbouncerPort], running: pgbouncerRunning(layout) },
    ...fleetNodes().map((node) => ({ part: node.name, ports: nodePorts(node.role, node.index), running: fleetNodePid(layout, node) !== undefined })),
    { part: 'haproxy', ports: [layout.apiPort, layout.statsPort, ...layout.trackers.map((t) => t.public)], running: haproxyRunning(layout) },
  ];
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Ports of parts that are not running which another program holds, as `port (part)`. */
export async function takenPorts(layout: ClusterLayout): Promise<string[]> {
  const taken: string[] = [];
  for (const part of status(layout).filter((p) => !p.running)) {
    for (const port of part.ports) if (!(await portFree(port))) taken.push(`${port} (${part.part})`);
  }
  return taken;
}

/**
 * Refuses to start a part whose port another program holds: a daemon would fail after forking, or,
 * worse, a Redis already there would be taken for one of the cluster's.
 */
async function checkPortsFree(layout: ClusterLayout): Promise<void> {
  const taken = await takenPorts(layout);
  if (taken.length > 0) {
    throw new Error(`another program listens on ${taken.join(', ')}: stop it, or choose other ports with LOCAL_CLUSTER_PORT_BASE (now ${layout.portBase})`);
  }
}

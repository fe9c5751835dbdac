import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_NODES, ENGINE_NODES, INGEST_NODES, REPOSITORY, type ClusterLayout } from './cluster-layout.ts';
import { isRunning, readPid, sleep, stopProcess } from './pid-file.ts';
import { DATABASE_NAME, postgresUrl } from './postgres-pair.ts';
import { redisClusterNodes } from './redis-cluster.ts';

export type NodeRole = 'ingest' | 'engine' | 'api';

export interface FleetNode {
  /** `ingest-1`, `api-2` …: its log is fleet/<name>.log, its pid file fleet/<name>.pid. */
  name: string;
  role: NodeRole;
  /** Its index among the nodes of its role, from 0. */
  index: number;
}

const FLEET = join(REPOSITORY, 'cli/fleet.js');
/** The line each role prints once it serves. */
const READY: Record<NodeRole, RegExp> = { ingest: /fleet: trackers on /, engine: /fleet: running engine/, api: /fleet: API listening on / };

export function fleetNodes(): FleetNode[] {
  const of = (role: NodeRole, count: number) => Array.from({ length: count }, (_, index) => ({ name: `${role}-${index + 1}`, role, index }));
  return [...of('ingest', INGEST_NODES), ...of('engine', ENGINE_NODES), ...of('api', API_NODES)];
}

export const logFile = (layout: ClusterLayout, node: FleetNode) => join(layout.paths.fleet, `${node.name}.log`);
const pidFile = (layout: ClusterLayout, node: FleetNode) => join(layout.paths.fleet, `${node.name}.pid`);

/** The pid of a node that runs; undefined otherwise. */
export function fleetNodePid(layout: ClusterLayout, node: FleetNode): number | undefined {
  const pid = readPid(pidFile(layout, node));
  return isRunning(pid, 'fleet.js') ? pid : undefined;
}

/**
 * What every node shares: the database through PgBouncer, reads from the replica, the Redis
 * Cluster, and loopback only (HAProxy is the way in). The caller's environment passes through
 * (GEOCODER, LOG_LEVEL …), but not the checkout's .env, which describes a one-process server.
 */
export function sharedEnvironment(layout: ClusterLayout, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['METRICS_PORT', 'REDIS_PASSWORD', 'DATA_DIR']) delete env[name];
  return {
    ...env,
    ENV_FILE: '',
    HOST: '127.0.0.1',
    DATABASE_URL: postgresUrl(layout.pgbouncerPort, DATABASE_NAME),
    DATABASE_READ_URL: postgresUrl(layout.postgresReplicaPort, DATABASE_NAME),
    REDIS_URL: '',
    REDIS_CLUSTER_NODES: redisClusterNodes(layout),
    // The engine's work over six queues so it spreads over the three masters; ingest and engine agree on it.
    ENGINE_QUEUES: '6',
    DEMO_SEED: 'false',
    DEMO_SIMULATE: 'false',
    PUBLIC_URL: `http://127.0.0.1:${layout.apiPort}`,
    // In transaction pooling a session's LISTEN cannot pass PgBouncer: it goes to the primary directly.
    ...(layout.poolMode === 'transaction'
      ? { DATABASE_POOL_MODE: 'transaction', DATABASE_LISTEN_URL: postgresUrl(layout.postgresPrimaryPort, DATABASE_NAME) }
      : { DATABASE_POOL_MODE: 'session', DATABASE_LISTEN_URL: '' }),
    ...extra,
  };
}

/** A node's own settings: an API node's port; an ingest node's tracker ports, behind HAProxy's PROXY protocol. */
export function nodeEnvironment(layout: ClusterLayout, node: FleetNode): Record<string, string> {
  const trackers = Object.fromEntries(layout.trackers.map((t) => [t.variable, node.role === 'ingest' ? String(t.nodes[node.index]) : '0']));
  const role: Record<NodeRole, Record<string, string>> = {
    // HAProxy is on 127.0.0.1: only it may name a tracker's address, and only it is trusted with X-Forwarded-For.
    ingest: { PORT: '0', TRACKER_PROXY_PROTOCOL: 'true', TRACKER_PROXY_FROM: '127.0.0.1' },
    engine: { PORT: '0' },
    api: { PORT: String(layout.apiNodePorts[node.index]), TRUST_PROXY: '127.0.0.1' },
  };
  return { ...trackers, OSMAND_PORT: '0', ...role[node.role] };
}

/** `fleet migrate` once, before the nodes start, so six processes do not race to make the schema. */
export async function migrateDatabase(layout: ClusterLayout, extra: Record<string, string> = {}): Promise<void> {
  const env = sharedEnvironment(layout, extra);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [FLEET, 'migrate'], { cwd: REPOSITORY, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject).once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fleet migrate failed (${code}): ${stderr.trim()}`))));
  });
}

/**
 * Starts the node in the background (its own session, so it outlives this command), its output
 * appended to its log, and resolves once it says it serves. A node that runs is left alone.
 */
export async function startFleetNode(layout: ClusterLayout, node: FleetNode, extra: Record<string, string> = {}): Promise<void> {
  if (fleetNodePid(layout, node)) return;
  mkdirSync(layout.paths.fleet, { recursive: true });
  const log = logFile(layout, node);
  const from = existsSync(log) ? statSync(log).size : 0;
  const fd = openSync(log, 'a');
  const child = spawn(process.execPath, ['--max-semi-space-size=1', FLEET, 'serve', '--roles', node.role], {
    cwd: REPOSITORY,
    env: { ...sharedEnvironment(layout, extra), ...nodeEnvironment(layout, node) },
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  closeSync(fd);
  child.unref();
  writeFileSync(pidFile(layout, node), `${child.pid}\n`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const output = readFileSync(log, 'utf8').slice(from);
    if (READY[node.role].test(output)) return;
    if (!fleetNodePid(layout, node) || Date.now() > deadline) {
      throw new Error(`${node.name} did not start (log: ${log}):\n${output.split('\n').slice(-15).join('\n')}`);
    }
    await sleep(100);
  }
}

/** SIGTERM: fleet's own shutdown (ingest acknowledges nothing more, flushes what it holds); SIGKILL after 30 s. */
export async function stopFleetNode(layout: ClusterLayout, node: FleetNode): Promise<void> {
  await stopProcess(pidFile(layout, node), 'fleet.js', 'SIGTERM', 30_000);
}

/** SIGKILL, as a crash: for tests of what the rest does without it. */
export async function killFleetNode(layout: ClusterLayout, node: FleetNode): Promise<void> {
  await stopProcess(pidFile(layout, node), 'fleet.js', 'SIGKILL', 0);
}

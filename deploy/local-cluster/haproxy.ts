import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { ClusterLayout } from './cluster-layout.ts';
import { renderHaproxyConfig, type HaproxyTopology } from './haproxy-config.ts';
import { isRunning, readPid, stopProcess } from './pid-file.ts';
import { run } from './postgres-user.ts';

const pidFile = (layout: ClusterLayout) => join(layout.paths.haproxy, 'haproxy.pid');
const socketPath = (layout: ClusterLayout) => join(layout.paths.haproxy, 'admin.sock');

/** The local cluster's HAProxy: every port on 127.0.0.1, the nodes' ports from the layout. */
export function localTopology(layout: ClusterLayout): HaproxyTopology {
  return {
    apiBind: `127.0.0.1:${layout.apiPort}`,
    apiServers: layout.apiNodePorts.map((port, i) => ({ name: `api-${i + 1}`, address: `127.0.0.1:${port}` })),
    trackers: layout.trackers.map((t) => ({
      protocol: t.protocol,
      bind: `127.0.0.1:${t.public}`,
      servers: t.nodes.map((port, i) => ({ name: `ingest-${i + 1}`, address: `127.0.0.1:${port}` })),
    })),
    statsBind: `127.0.0.1:${layout.statsPort}`,
    statsSocket: socketPath(layout),
  };
}

export function haproxyRunning(layout: ClusterLayout): boolean {
  return isRunning(readPid(pidFile(layout)), 'haproxy');
}

export async function startHaproxy(layout: ClusterLayout): Promise<void> {
  if (haproxyRunning(layout)) return;
  mkdirSync(layout.paths.haproxy, { recursive: true });
  const config = join(layout.paths.haproxy, 'haproxy.cfg');
  writeFileSync(config, renderHaproxyConfig(localTopology(layout)));
  await run('haproxy', ['-c', '-q', '-f', config]);
  // -D: into the background once every port is bound (it fails here if one is taken).
  await run('haproxy', ['-D', '-p', pidFile(layout), '-f', config]);
}

export async function stopHaproxy(layout: ClusterLayout): Promise<void> {
  await stopProcess(pidFile(layout), 'haproxy', 'SIGUSR1', 5_000); // SIGUSR1: stop listening, let connections finish
}

export interface ServerState {
  backend: string;
  server: string;
  /** UP, DOWN, `UP 1/2` (going down) … */
  status: string;
  /** Connections it holds now. */
  sessions: number;
  /** Connections it has been given since HAProxy started. */
  total: number;
}

/** Each backend server as HAProxy sees it (`show stat` on the admin socket). */
export async function haproxyServers(layout: ClusterLayout): Promise<ServerState[]> {
  const csv = await new Promise<string>((resolve, reject) => {
    let text = '';
    const socket = connect(socketPath(layout), () => socket.write('show stat\n'));
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text)).on('error', reject);
  });
  const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
  const columns = header!.split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  return rows
    .map((line) => line.split(','))
    .filter((row) => !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
    .map((row) => ({ backend: at(row, 'pxname'), server: at(row, 'svname'), status: at(row, 'status'), sessions: Number(at(row, 'scur')), total: Number(at(row, 'stot')) }));
}

import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

export interface TrackerLoad {
  /** The trackers' protocol (simulators/tracker-dialect.ts TRACKER_DIALECTS); Teltonika unless given. */
  protocol?: string;
  devices: number;
  intervalMs: number;
  recordsPerUpload: number;
  durationMs: number;
  warmupMs: number;
  seed: number;
}

export interface LoadResult {
  generated: number;
  acknowledged: number;
  ackedPerSec: number;
  /** Positions acknowledged in the steady window, and its length. */
  steadyAcked: number;
  steadySeconds: number;
  /** The load generator's own CPU over the window. */
  cpuSeconds: number;
  refused: number;
  p50: number;
  p99: number;
}

/**
 * Simulated trackers of one protocol (ingest-load.ts) in a process of their own, so their work does not
 * share the server's event loop. BENCH_LOAD_NODE_ARGS adds node options to it (e.g. --cpu-prof).
 */
export async function runTrackerLoad(port: number, load: TrackerLoad, onWindow?: (edge: 'start' | 'end') => void): Promise<LoadResult> {
  const argv = [port, load.devices, load.intervalMs, load.recordsPerUpload, load.durationMs, load.warmupMs, load.seed, load.protocol ?? 'teltonika'].map(String);
  const nodeArgs = process.env.BENCH_LOAD_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', resolve(import.meta.dirname, 'ingest-load.ts'), ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let told = 0;
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    const lines = out.split('\n');
    for (; told < lines.length - 1; told++) if (lines[told] === 'window start' || lines[told] === 'window end') onWindow?.(lines[told]!.slice(7) as 'start' | 'end');
  });
  await new Promise((r) => child.once('exit', r));
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** `--scenario=2,3`: the 1-based rows a bench should run, or undefined for all. */
export function pickedScenarios(args: string[]): number[] | undefined {
  const pick = args.find((a) => a.startsWith('--scenario='));
  return pick ? pick.slice('--scenario='.length).split(',').map(Number) : undefined;
}

/** `--protocol=gps103` (or `--protocol gps103`): the trackers' protocol, Teltonika unless given. */
export function pickedProtocol(args: string[]): string {
  const pick = args.find((a) => a.startsWith('--protocol='));
  if (pick) return pick.slice('--protocol='.length);
  const at = args.indexOf('--protocol');
  return at >= 0 && args[at + 1] ? args[at + 1]! : 'teltonika';
}

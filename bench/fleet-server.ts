import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';

const FLEET = resolve(import.meta.dirname, '../cli/fleet.js');

export interface FleetServer {
  process: ChildProcess;
  pid: number;
  /** Stops it as an operator would (SIGTERM: in-flight batches commit) and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * `fleet serve` as users run it, in a process of its own: what a bench measures from outside. Every
 * tracker listener is off but those `env` names; no demo; warnings only. `processes` above 1 runs
 * `--processes N` (its workers share the ports through node:cluster); `roles` runs `--roles` (all by default).
 */
export async function startFleetServer(env: Record<string, string>, processes = 1, roles?: string): Promise<FleetServer> {
  const trackersOff = { ...Object.fromEntries(TRACKER_PROTOCOLS.map((p) => [p.portVariable, '0'])), OSMAND_PORT: '0' };
  const inherited = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'HOST']) delete inherited[name];
  // BENCH_SERVER_NODE_ARGS adds node options to it (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const args = [...nodeArgs, FLEET, 'serve', ...(processes > 1 ? ['--processes', String(processes)] : []), ...(roles ? ['--roles', roles] : [])];
  const child = spawn(process.execPath, args, {
    env: { ...inherited, ...trackersOff, ENV_FILE: '', DEMO_SEED: 'false', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not get ready in 120 s:\n${output}`)), 120_000);
    const check = () => {
      // One line per process once it runs: "API listening on …", or "running ingest, engine" without the API.
      if ((output.match(/API listening on|fleet: running /g) ?? []).length >= processes) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        ready();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`fleet serve exited before it was ready:\n${output}`));
    });
  });
  return {
    process: child,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

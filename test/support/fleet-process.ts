import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { TRACKER_PROTOCOLS } from '../../ingest/protocol-catalog.ts';
import { adminPool, databaseUrlFor } from '../../db/postgres-admin.ts';
import { deleteRedisKeys } from './redis-keys.ts';

// `fleet serve` and `fleet …` as a user runs them: real processes on a database of their own.

export const root = resolve(import.meta.dirname, '../..');
export const FLEET = join(root, 'cli/fleet.js');

/** The environment of a spawned command: this process's, minus the settings each test chooses. */
export function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'HOST', 'PORT', 'DEMO_SEED', 'LOG_LEVEL']) delete env[name];
  // Tracker listeners stay off unless a test asks for one, so runs never fight over the standard ports.
  const trackersOff = { ...Object.fromEntries(TRACKER_PROTOCOLS.map((p) => [p.portVariable, '0'])), OSMAND_PORT: '0' };
  // ENV_FILE empty: a developer's .env in the checkout must not leak into the tests' processes.
  // GEOCODER off unless a test asks: the offline places take 3 to 5 s of CPU and ~200 MB to load in
  // each process that looks an address up, which no other test needs.
  return { ...env, ...trackersOff, LOG_LEVEL: 'warn', ENV_FILE: '', GEOCODER: 'off', ...extra };
}

/** A database nobody has open: a copy of the template, for `fleet serve` to own. */
export interface FreshDatabase {
  env: Record<string, string>;
  dataDir: string | undefined;
  /** The database's name on DATABASE_URL's server. */
  name: string | undefined;
  destroy(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const name = `fleetcore_cli_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = adminPool(databaseUrl);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
    return {
      env: { DATABASE_URL: databaseUrlFor(databaseUrl, name) },
      dataDir: undefined,
      name,
      async destroy() {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
        await deleteRedisKeys(`fleetcore-${name}`); // its queues, prefixed by the database
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-serve-'));
  cpSync(inject('templateDir'), dataDir, { recursive: true });
  return { env: { DATA_DIR: dataDir }, dataDir, name: undefined, destroy: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

export interface Serving {
  process: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `fleet serve` and waits until stdout matches `ready` (the listening line by default). */
export async function serve(env: Record<string, string>, ready = /listening on http:\/\/localhost:\d+/, args: string[] = []): Promise<Serving> {
  const child = spawn(process.execPath, [FLEET, 'serve', ...args], { cwd: root, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const output = () => `stdout:\n${stdout}\nstderr:\n${stderr}`;
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not get ready in 120 s\n${output()}`)), 120_000);
    const check = () => {
      if (ready.test(stdout)) {
        clearTimeout(timer);
        done();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(new Error(`fleet serve exited (${code ?? signal}) before it was ready\n${output()}`));
    });
  });
  const url = /listening on (http:\/\/localhost:\d+)/.exec(stdout)?.[1] ?? '';
  return { process: child, url, output: () => `stdout:\n${stdout}\nstderr:\n${stderr}`, exited };
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Stops a `serve`d process as an operator would (SIGTERM) and waits until it has exited; nothing when none was started. */
export async function stopServing(serving: Serving | undefined): Promise<void> {
  if (!serving || serving.process.exitCode !== null) return;
  serving.process.kill('SIGTERM');
  await serving.exited;
}

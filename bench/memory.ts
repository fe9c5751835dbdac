import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../db/accounts.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { adminPool, databaseUrlFor } from '../db/postgres-admin.ts';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';
import { deleteRedisPrefix } from '../runtime/delete-redis-prefix.ts';
import { simulatedImei } from '../simulators/simulated-devices.ts';
import { freePort, runTrackerLoad } from './tracker-load.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SEED = 7;
const MB = 1024 * 1024;
/** Open files the server and the trackers' process may hold: as many as the shell's hard limit lets `ulimit -n` raise to. */
const OPEN_FILES = Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim()) || 1024;
/** Files the server holds besides tracker sockets (listeners, database and Redis connections, modules). */
const OTHER_FILES = 1_000;

interface Sample {
  /** VmRSS of the server's node process. */
  rss: number;
  /** VmRSS of its child processes (tsx's esbuild service), counted apart. */
  childRss: number;
  /** After a forced full GC, through bench/memory-probe.js. */
  heapUsed: number;
  arrayBuffers: number;
}

interface Server {
  child: ChildProcess;
  sample(): Promise<Sample>;
  stop(): Promise<void>;
}

function vmRss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The node options of package.json's start script (`node <options> cli/fleet.js serve`): `npm start` as users run it. */
function startScriptOptions(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const match = /^node\s+(.*?)\s*cli\/fleet\.js serve$/.exec(scripts.start);
  return match?.[1] ? match[1].split(/\s+/) : [];
}

/** `fleet serve` with `nodeOptions`, the memory probe preloaded and its open files raised. */
async function serve(env: Record<string, string>, nodeOptions: string[] = []): Promise<Server> {
  const trackersOff = Object.fromEntries(TRACKER_PROTOCOLS.map((p) => [p.portVariable, '0']));
  const child = spawn(
    'sh',
    ['-c', `ulimit -n ${OPEN_FILES} && exec "$@"`, 'sh', process.execPath, ...nodeOptions, '--expose-gc', '--import', './bench/memory-probe.js', 'cli/fleet.js', 'serve'],
    {
      cwd: ROOT,
      env: { ...process.env, ...trackersOff, OSMAND_PORT: '0', PORT: '0', LOG_LEVEL: 'warn', ENV_FILE: '', TRACKER_MAX_CONNECTIONS: '1000000', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not get ready in 180 s:\n${output}`)), 180_000);
    child.once('exit', () => fail(new Error(`fleet serve exited:\n${output}`)));
    const check = setInterval(() => {
      if (/listening on http:\/\/localhost:\d+/.test(output)) {
        clearInterval(check);
        clearTimeout(timer);
        done();
      }
    }, 100);
  });
  const pid = child.pid!;
  return {
    child,
    async sample() {
      const probed = await new Promise<NodeJS.MemoryUsage & { collected: boolean }>((done) => {
        child.once('message', (m) => done(m as NodeJS.MemoryUsage & { collected: boolean }));
        child.send('memory');
      });
      if (!probed.collected) throw new Error('the server ran without --expose-gc');
      return { rss: vmRss(pid), childRss: childPids(pid).reduce((n, c) => n + vmRss(c), 0), heapUsed: probed.heapUsed, arrayBuffers: probed.arrayBuffers };
    },
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Row {
  case: string;
  rssMB: number;
  helperRssMB: number;
  heapMB: number;
  arrayBuffersMB: number;
}

function row(name: string, s: Sample): Row {
  const mb = (n: number) => Math.round(n / MB);
  return { case: name, rssMB: mb(s.rss), helperRssMB: mb(s.childRss), heapMB: mb(s.heapUsed), arrayBuffersMB: mb(s.arrayBuffers) };
}

/** `npm start`'s process (its script's node options) a minute (--settle=s) after it listens, on a fresh data directory and on it again. */
async function embeddedRows(settleMs: number): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-memory-'));
  const rows: Row[] = [];
  try {
    for (const start of ['fresh data dir', 'reopened data dir']) {
      const server = await serve({ DATA_DIR: dataDir, TELTONIKA_PORT: String(await freePort()) }, startScriptOptions());
      await sleep(settleMs);
      rows.push(row(`embedded + demo fleet, ${start}`, await server.sample()));
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

/** A database of the bench's own on the PostgreSQL server, migrated, with `devices` simulated Teltonikas registered. */
async function postgresDatabase(serverUrl: string, redisUrl: string, devices: number): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fleetcore_bench_memory_${process.pid}`;
  const admin = adminPool(serverUrl);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = databaseUrlFor(serverUrl, name);
  const handle = await openDatabase({ databaseUrl: url, dataDir: tmpdir(), embedded: 'own' });
  try {
    await migrateToLatest(handle.db);
    const account = await createAccount(handle.db, 'Memory bench');
    const imeis = Array.from({ length: devices }, (_, i) => simulatedImei(SEED, i));
    // One statement for tens of thousands of devices: addDevice's transaction per device takes minutes.
    await sql`INSERT INTO devices (account_id, imei, name, plates, protocol, mode)
      SELECT ${account.id}, imei, 'Sim ' || ordinality, 'SIM-' || ordinality, 'teltonika', 'live'
      FROM unnest(${imeis}::text[]) WITH ORDINALITY AS t(imei, ordinality)`.execute(handle.db);
  } finally {
    await handle.close();
  }
  return {
    url,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await deleteRedisPrefix(redisUrl, `fleetcore-${name}`); // the servers' queues are prefixed by the database
    },
  };
}

/** Asks bench/idle-trackers.ts for `total` logged-in, silent trackers; resolves when they are connected. */
function idleTrackers(port: number): { grow(total: number): Promise<void>; stop(): Promise<void> } {
  const child = spawn('sh', ['-c', `ulimit -n ${OPEN_FILES} && exec "$@"`, 'sh', process.execPath, '--import', 'tsx', 'bench/idle-trackers.ts', String(port), String(SEED)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  return {
    async grow(total) {
      const marker = `ok ${total}\n`;
      child.stdin!.write(`${total}\n`);
      while (!out.includes(marker)) {
        if (child.exitCode !== null) throw new Error('the idle trackers stopped (see above)');
        await sleep(200);
      }
    },
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      child.stdin!.end();
      await exited;
    },
  };
}

async function postgresRows(serverUrl: string, settleMs: number, idleCounts: number[]): Promise<{ rows: Row[]; perConnection: string[][] }> {
  const rows: Row[] = [];
  // `node cli/fleet.js serve` as given, or with the options NODE_OPTIONS passes to it.
  const nodeOptionsNote = process.env.NODE_OPTIONS ? ` (NODE_OPTIONS=${process.env.NODE_OPTIONS})` : '';
  const perConnection: string[][] = [];
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const database = await postgresDatabase(serverUrl, redisUrl, Math.max(1_000, ...idleCounts));
  const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl, DEMO_SEED: 'false' };
  try {
    let port = await freePort();
    let server = await serve({ ...env, TELTONIKA_PORT: String(port) });
    await sleep(settleMs / 3);
    rows.push(row(`PostgreSQL mode${nodeOptionsNote}, 0 trackers`, await server.sample()));
    let during: Sample | undefined;
    await runTrackerLoad(port, { devices: 1_000, intervalMs: 5_000, recordsPerUpload: 1, durationMs: settleMs, warmupMs: settleMs / 2, seed: SEED }, (edge) => {
      if (edge === 'end') void server.sample().then((s) => (during = s));
    });
    while (!during) await sleep(100);
    rows.push(row(`PostgreSQL mode${nodeOptionsNote}, 1,000 trackers reporting every 5 s`, during));
    await server.stop();

    // Idle connections on a server of their own, measured from a settled baseline.
    port = await freePort();
    server = await serve({ ...env, TELTONIKA_PORT: String(port), GEOCODER: 'off' });
    await sleep(settleMs / 3);
    const baseline = await server.sample();
    const trackers = idleTrackers(port);
    try {
      for (const count of idleCounts) {
        await trackers.grow(count);
        await sleep(5_000);
        const s = await server.sample();
        perConnection.push([
          count.toLocaleString('en'),
          String(Math.round((s.rss - baseline.rss) / count)),
          String(Math.round((s.heapUsed - baseline.heapUsed) / count)),
          String(Math.round((s.arrayBuffers - baseline.arrayBuffers) / count)),
        ]);
      }
    } finally {
      await trackers.stop();
      await server.stop();
    }
  } finally {
    await database.drop();
  }
  return { rows, perConnection };
}

function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/**
 * Resident memory of `fleet serve`: embedded with the demo fleet (fresh and reopened data
 * directory), PostgreSQL mode at 0 and 1,000 reporting trackers, and the cost of one idle tracker
 * connection. Heap figures follow a forced full GC (the server runs with --expose-gc and
 * bench/memory-probe.js). `--settle=60` (seconds after listening), `--idle=10000,50000` (capped by the open-files hard limit),
 * `--only=embedded|postgres`, `--json`. PostgreSQL rows use BENCH_POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) to create a database of their own, and REDIS_URL.
 */
export default async function memoryBench(args: string[]): Promise<void> {
  const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const settleMs = Number(option('settle') ?? 60) * 1000;
  const wanted = (option('idle') ?? '10000,50000').split(',').map(Number);
  // Each connection is a file in the server and one in the trackers' process: a count the limit
  // cannot hold is measured at the most it can, and the table says so.
  const idleCounts = [...new Set(wanted.map((n) => Math.min(n, OPEN_FILES - OTHER_FILES)))];
  const capped = wanted.some((n) => n > OPEN_FILES - OTHER_FILES);
  const only = option('only');
  const rows: Row[] = [];
  let perConnection: string[][] = [];
  if (only !== 'postgres') rows.push(...(await embeddedRows(settleMs)));
  if (only !== 'embedded') {
    const result = await postgresRows(process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', settleMs, idleCounts);
    rows.push(...result.rows);
    perConnection = result.perConnection;
  }
  if (args.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ rows, perConnection })}\n`);
    return;
  }
  const mb = (n: number) => `${n} MB`;
  process.stdout.write(`${table(['server', 'RSS (node)', 'RSS (esbuild helper)', 'heap after GC', 'array buffers'], rows.map((r) => [r.case, mb(r.rssMB), mb(r.helperRssMB), mb(r.heapMB), mb(r.arrayBuffersMB)]))}\n`);
  if (perConnection.length > 0) {
    process.stdout.write(`\nOne idle, logged-in Teltonika connection (PostgreSQL mode, geocoder off), over the server's settled baseline:\n\n`);
    process.stdout.write(`${table(['connections', 'RSS bytes each', 'heap bytes each (after GC)', 'array-buffer bytes each'], perConnection)}\n`);
    if (capped) process.stdout.write(`\n(${wanted.join(', ')} asked; a process may hold ${OPEN_FILES} open files here, so the largest count is ${OPEN_FILES - OTHER_FILES})\n`);
  }
}

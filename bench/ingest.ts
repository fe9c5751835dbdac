import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { silentLogger } from '../cli/logger.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createAccount } from '../db/accounts.ts';
import { startIngest } from '../ingest/start-ingest.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';

const DURATION_MS = 15_000;
const SEED = 9;

interface Scenario {
  devices: number;
  intervalMs: number;
}

/** Offered load: devices / interval fixes per second. */
const SCENARIOS: Scenario[] = [
  { devices: 1_000, intervalMs: 100 }, // 10,000 fixes/s offered
  { devices: 1_000, intervalMs: 50 }, // 20,000 fixes/s offered
  { devices: 10_000, intervalMs: 1_000 }, // 10,000 connections
];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

async function runLoad(port: number, s: Scenario): Promise<{ generated: number; acknowledged: number; refused: number; p50: number; p99: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'ingest-load.ts'), String(port), String(s.devices), String(s.intervalMs), String(DURATION_MS), String(SEED)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((r) => child.once('exit', r));
  return JSON.parse(out.trim().split('\n').pop()!);
}

/**
 * Simulated Teltonika trackers over loopback TCP into the ingest path (decode, group commit, ACK after
 * commit) on this machine's database: committed positions per second, packet → ACK latency, and the
 * server process's memory, for a few offered loads. PostgreSQL with DATABASE_URL, embedded otherwise.
 */
export default async function ingestBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const rows = [];
  try {
    await migrateToLatest(handle.db);
    const account = await createAccount(handle.db, 'Ingest bench');
    await ensureSimulatedDevices(handle.db, account.id, SEED, Math.max(...SCENARIOS.map((s) => s.devices)));
    for (const scenario of SCENARIOS) {
      const server = await startIngest(handle, silentLogger, {
        host: '127.0.0.1', ports: { teltonika: await freePort() }, osmandPort: 0,
        limits: { idleTimeoutMs: 120_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 5, onDevicesUpdated: () => undefined,
      });
      const before = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions`.execute(handle.db)).rows[0]!.n;
      let peakRss = 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
      const started = performance.now();
      const load = await runLoad(server.listeners[0]!.port, scenario);
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      await server.close();
      const after = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions`.execute(handle.db)).rows[0]!.n;
      rows.push({
        devices: scenario.devices,
        offeredPerSec: Math.round((scenario.devices * 1000) / scenario.intervalMs),
        committedPerSec: Math.round((after - before) / seconds),
        acknowledged: load.acknowledged,
        lost: load.acknowledged - (after - before),
        ackP50Ms: +load.p50.toFixed(1),
        ackP99Ms: +load.p99.toFixed(1),
        serverRssMiB: Math.round(peakRss / 2 ** 20),
      });
    }
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Ingest over loopback TCP (Teltonika Codec 8), ${handle.description}, ${DURATION_MS / 1000} s per load\n`);
    console.table(rows);
  }
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { silentLogger } from '../runtime/logger.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createAccount } from '../db/accounts.ts';
import { startIngest } from '../ingest/start-ingest.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { freePort, pickedScenarios, runTrackerLoad } from './tracker-load.ts';

const DURATION_MS = 20_000;
const WARMUP_MS = 5_000;
const SEED = 9;

interface Scenario {
  devices: number;
  /** Each tracker records a fix this often… */
  intervalMs: number;
  /** …and uploads this many at a time (Teltonika's "min records to send"). */
  recordsPerUpload: number;
}

/** Offered load: devices × 1000 / intervalMs fixes per second. */
const SCENARIOS: Scenario[] = [
  { devices: 1_000, intervalMs: 100, recordsPerUpload: 1 }, // 10,000 fixes/s, one packet per fix
  { devices: 1_000, intervalMs: 50, recordsPerUpload: 10 }, // 20,000 fixes/s in 2,000 packets/s
  { devices: 1_000, intervalMs: 20, recordsPerUpload: 10 }, // 50,000 fixes/s in 5,000 packets/s
  { devices: 10_000, intervalMs: 1_000, recordsPerUpload: 1 }, // 10,000 connections
];

/**
 * Simulated Teltonika trackers over loopback TCP into the ingest path (decode, group commit, ACK after
 * commit) on this machine's database: committed (= acknowledged) positions per second over the steady
 * window, packet → ACK latency, the server process's memory, and a count check that every
 * acknowledged position is in the table. PostgreSQL with DATABASE_URL, embedded otherwise.
 * `--scenario=2,3` runs only those rows.
 */
export default async function ingestBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const rows = [];
  try {
    await migrateToLatest(handle.db);
    const account = await createAccount(handle.db, 'Ingest bench');
    await ensureSimulatedDevices(handle.db, account.id, SEED, Math.max(...SCENARIOS.map((s) => s.devices)));
    const picked = pickedScenarios(args);
    for (const [index, scenario] of SCENARIOS.entries()) {
      if (picked && !picked.includes(index + 1)) continue;
      const server = await startIngest(handle, silentLogger, {
        host: '127.0.0.1', ports: { teltonika: await freePort() }, osmandPort: 0,
        limits: { idleTimeoutMs: 120_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 5, onDevicesUpdated: () => undefined,
      });
      const before = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions`.execute(handle.db)).rows[0]!.n;
      let peakRss = 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
      const load = await runTrackerLoad(server.listeners[0]!.port, { ...scenario, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: SEED });
      clearInterval(sampler);
      await server.close();
      const after = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions`.execute(handle.db)).rows[0]!.n;
      rows.push({
        devices: scenario.devices,
        recordsPerPacket: scenario.recordsPerUpload,
        offeredPerSec: Math.round((scenario.devices * 1000) / scenario.intervalMs),
        committedPerSec: Math.round(load.ackedPerSec),
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
    process.stdout.write(`Ingest over loopback TCP (Teltonika Codec 8), ${handle.description}, ${DURATION_MS / 1000} s per load, rates over the last ${(DURATION_MS - WARMUP_MS) / 1000} s\n`);
    console.table(rows);
  }
}

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
import { TRACKER_DIALECTS } from '../simulators/tracker-dialect.ts';
import { freePort, pickedProtocol, pickedScenarios, runTrackerLoad } from './tracker-load.ts';

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

/** How each protocol's trackers are named in the table's title. */
const WIRE_FORMATS: Record<string, string> = {
  teltonika: 'Teltonika Codec 8',
  gt06: 'GT06, one fix per message',
  gps103: 'GPS103 text lines, ON to the heartbeat after each upload as its receipt',
  jt808: 'JT/T 808-2019, 0x0200 per fix or 0x0704 batches',
};

/**
 * Simulated trackers (Teltonika; `--protocol=gps103` or another simulated dialect) over loopback TCP
 * into the ingest path (decode, group commit, ACK after commit) on this machine's database: committed (= acknowledged) positions per second over the steady
 * window, packet → ACK latency, the server process's memory, and a count check that every
 * acknowledged position is in the table. PostgreSQL with DATABASE_URL, embedded otherwise.
 * `--scenario=2,3` runs only those rows. Protocols whose times are whole seconds (GT06, GPS103) stamp
 * fixes closer than that a second apart, so at the faster rows their fix times run ahead of the clock.
 */
export default async function ingestBench(args: string[]): Promise<void> {
  const protocol = pickedProtocol(args);
  if (!TRACKER_DIALECTS[protocol]) throw new Error(`--protocol=${protocol}: no simulated trackers speak it (they speak ${Object.keys(TRACKER_DIALECTS).join(', ')})`);
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const rows = [];
  try {
    await migrateToLatest(handle.db);
    const account = await createAccount(handle.db, 'Ingest bench');
    const picked = pickedScenarios(args);
    const chosen = SCENARIOS.filter((_, index) => !picked || picked.includes(index + 1));
    // Only as many devices as the rows run need: registering 10,000 takes minutes on the embedded database.
    const imeis = await ensureSimulatedDevices(handle.db, account.id, SEED, Math.max(0, ...chosen.map((s) => s.devices)), protocol);
    for (const scenario of chosen) {
      // Each row starts with the trackers holding no positions: the same seeded trackers stamp the
      // same times again, and where the protocol's times are whole seconds the faster rows run ahead
      // of the clock, so a row's fixes would otherwise repeat the last row's, be kept once, and count as lost.
      await sql`DELETE FROM positions WHERE device_id IN (SELECT id FROM devices WHERE imei = ANY(${imeis}::text[]))`.execute(handle.db);
      const server = await startIngest(handle, silentLogger, {
        host: '127.0.0.1', ports: { [protocol]: await freePort() }, osmandPort: 0,
        limits: { idleTimeoutMs: 120_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 5, onDevicesUpdated: () => undefined,
      });
      const listener = server.listeners[0];
      if (!listener) {
        await server.close();
        throw new Error(`--protocol=${protocol}: the ingest server has no ${protocol} listener (not in ingest/protocol-catalog.ts)`);
      }
      const before = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions`.execute(handle.db)).rows[0]!.n;
      let peakRss = 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
      const load = await runTrackerLoad(listener.port, { ...scenario, protocol, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: SEED });
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
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, protocol, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Ingest over loopback TCP (${WIRE_FORMATS[protocol] ?? protocol}), ${handle.description}, ${DURATION_MS / 1000} s per load, rates over the last ${(DURATION_MS - WARMUP_MS) / 1000} s\n`);
    console.table(rows);
  }
}

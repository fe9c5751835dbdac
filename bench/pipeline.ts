import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../db/accounts.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { bullmqQueues } from '../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import { ensureSimulatedDevices, simulatedImei } from '../simulators/simulated-devices.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { seedGrid } from './geofence-grid.ts';
import { startBenchPipeline } from './bench-pipeline.ts';
import { pickedScenarios, runTrackerLoad } from './tracker-load.ts';

const SEED = 9;
const DURATION_MS = 25_000;
const WARMUP_MS = 5_000;
const CENTER = { lat: 19.43, lng: -99.13 };

interface Scenario {
  devices: number;
  intervalMs: number;
  recordsPerUpload: number;
}

const SCENARIOS: Scenario[] = [
  { devices: 1_000, intervalMs: 100, recordsPerUpload: 10 }, // 10,000 fixes/s
  { devices: 1_000, intervalMs: 33, recordsPerUpload: 10 }, // 30,000 fixes/s
];

/**
 * Simulated trackers over TCP through ingest, the engine (geofence evaluation, events, visits) and the
 * database: positions per second committed and evaluated, enter/exit events per second, and the delay
 * from a fix's arrival at the server to its enter event being queryable (polled every 50 ms).
 * PostgreSQL with DATABASE_URL (BullMQ too with REDIS_URL), the embedded database otherwise.
 */
export default async function pipelineBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const queues = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: `fleetcore-bench-${process.pid}` }) : inProcessQueues();
  const rows = [];
  try {
    await migrateToLatest(handle.db);
    // The simulated IMEIs are fixed by the seed: reuse the account that holds them (an earlier bench run's).
    const holder = await handle.db.selectFrom('devices').select('account_id').where('imei', '=', simulatedImei(SEED, 0)).executeTakeFirst();
    const accountId = holder?.account_id ?? (await createAccount(handle.db, 'Pipeline bench')).id;
    const geofences = await seedGrid(handle.db, accountId, CENTER);
    await ensureSimulatedDevices(handle.db, accountId, SEED, Math.max(...SCENARIOS.map((s) => s.devices)));
    // History left by an earlier run (or by the ingest bench, same IMEIs) is marked evaluated: this
    // bench measures live traffic, not a catch-up.
    await sql`
      INSERT INTO device_engine_states (device_id, cursor_fix_time)
      SELECT s.device_id, s.fix_time FROM device_states s JOIN devices d ON d.id = s.device_id WHERE d.account_id = ${accountId}
      ON CONFLICT (device_id) DO UPDATE SET cursor_fix_time = excluded.cursor_fix_time, inside = '{}', pending = '[]'
    `.execute(handle.db);
    const picked = pickedScenarios(args);

    for (const [index, scenario] of SCENARIOS.entries()) {
      if (picked && !picked.includes(index + 1)) continue;
      const pipeline = await startBenchPipeline(handle, queues);
      const startedAt = new Date();
      const seen = new Set<number>();
      const delays: number[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const { rows: fresh } = await sql<{ id: number; arrived: Date }>`
            SELECT e.id, p.server_time AS arrived FROM geofence_events e
            JOIN positions p ON p.device_id = e.device_id AND p.fix_time = e.fix_time
            WHERE e.type = 'enter' AND e.created_at >= ${startedAt.toISOString()}::timestamptz
          `.execute(handle.db);
          const now = Date.now();
          for (const r of fresh) {
            if (seen.has(r.id)) continue;
            seen.add(r.id);
            if (now - startedAt.getTime() > WARMUP_MS) delays.push(now - r.arrived.getTime());
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const load = await runTrackerLoad(pipeline.trackerPort, { ...scenario, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: SEED });
      const seconds = (Date.now() - startedAt.getTime()) / 1000;
      await pipeline.stopIngest();
      // Let the engine finish what was committed, then count what it produced.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { rows: behind } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM device_states s JOIN device_engine_states e ON e.device_id = s.device_id
          WHERE s.fix_time > coalesce(e.cursor_fix_time, '-infinity')`.execute(handle.db);
        if (behind[0]!.n === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      polling = false;
      await poller;
      await pipeline.stopEngine();
      const { rows: produced } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM geofence_events WHERE created_at >= ${startedAt.toISOString()}::timestamptz`.execute(handle.db);
      const latency = summarise(delays);
      rows.push({
        devices: scenario.devices,
        recordsPerPacket: scenario.recordsPerUpload,
        offeredPerSec: Math.round((scenario.devices * 1000) / scenario.intervalMs),
        positionsPerSec: Math.round(load.ackedPerSec),
        eventsPerSec: Math.round(produced[0]!.n / seconds),
        enterEventsTimed: latency.count,
        eventDelayP50Ms: Math.round(latency.p50),
        eventDelayP99Ms: Math.round(latency.p99),
        ackP99Ms: Math.round(load.p99),
      });
    }
    process.stdout.write(`geofences: ${geofences}\n`);
  } finally {
    await queues.close();
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, queue: queues.kind, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Pipeline over loopback TCP: ingest → engine (${queues.kind}) → ${handle.description}, ${DURATION_MS / 1000} s per load\n`);
    console.table(rows);
  }
}

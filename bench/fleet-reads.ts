import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { bullmqQueues } from '../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import { silentLogger } from '../runtime/logger.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { ensureSimulatedDevices, simulatedImei } from '../simulators/simulated-devices.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startBenchPipeline } from './bench-pipeline.ts';
import { runTrackerLoad } from './tracker-load.ts';

const SEED = 13;
const DEVICES = 1_000;
const CONCURRENCY = 32;
const DURATION_MS = 10_000;
const THRESHOLDS = { inactiveAfterMinutes: 30, movingSpeedKmh: 5 };

interface HttpResult {
  latencies: number[];
  errors: number;
  elapsedMs: number;
  /** Answer received minus the envelope's `timestamp` (when the data was read), per answer that has one. */
  ages: number[];
}

function hammer(url: string, key: string, durationMs: number): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./keepalive-http-load.js', import.meta.url), { workerData: { url, key, concurrency: CONCURRENCY, durationMs, measureAge: true } });
    worker.once('message', (result: HttpResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/**
 * The fleet-wide reads under load: 1,000 devices reporting through ingest and the engine (10,000
 * positions/s from simulated Teltonika trackers in a process of their own) while 32 clients poll
 * GET /devices/status (all 1,000 at once), then GET /vehicles, over real HTTP. Prints requests/s,
 * latency, the positions/s the pipeline kept meanwhile, and the oldest answer seen (answer received
 * minus the read time in its envelope). `--idle` measures without the pipeline; `--groups` has the
 * caller see its vehicles through a vehicle group (half of them granted directly too). PostgreSQL with
 * DATABASE_URL (BullMQ too with REDIS_URL), the embedded database otherwise.
 */
export default async function fleetReadsBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const queues = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: `fleetcore-bench-${process.pid}` }) : inProcessQueues();
  const withPipeline = !args.includes('--idle');
  const viaGroups = args.includes('--groups');
  const rows = [];
  try {
    await migrateToLatest(handle.db);
    const f = fixtures(handle.db);
    // The simulated IMEIs are fixed by the seed: reuse the account that holds them (an earlier run's).
    const holder = await handle.db.selectFrom('devices').select('account_id').where('imei', '=', simulatedImei(SEED, 0)).executeTakeFirst();
    const accountId = holder?.account_id ?? (await f.account()).id;
    const user = await f.user(accountId);
    const { key } = await f.key(user.id);
    await ensureSimulatedDevices(handle.db, accountId, SEED, DEVICES);
    if (viaGroups) {
      // The union's worst case: every vehicle through a group, half of them granted directly too.
      const group = await handle.db.insertInto('vehicle_groups').values({ account_id: accountId, mode: 'live', name: `bench ${user.id}` }).returning('id').executeTakeFirstOrThrow();
      await sql`INSERT INTO vehicle_group_devices (group_id, device_id) SELECT ${group.id}, id FROM devices WHERE account_id = ${accountId}`.execute(handle.db);
      await handle.db.insertInto('user_vehicle_groups').values({ user_id: user.id, group_id: group.id }).execute();
      await sql`INSERT INTO user_device_grants (user_id, device_id) SELECT ${user.id}, id FROM devices WHERE account_id = ${accountId} AND id % 2 = 0 ON CONFLICT DO NOTHING`.execute(handle.db);
    } else {
      await sql`INSERT INTO user_device_grants (user_id, device_id) SELECT ${user.id}, id FROM devices WHERE account_id = ${accountId} ON CONFLICT DO NOTHING`.execute(handle.db);
    }

    const app = createApp({ db: handle.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1e9, 10_000), config: { bodyLimitBytes: 262_144, deviceStatus: THRESHOLDS, onTimeToleranceMinutes: 5 } });
    const http = createAdaptorServer({ fetch: app.fetch }) as Server;
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1`;

    const pipeline = await startBenchPipeline(handle, queues);
    const endpoints = [
      [`GET /devices/status (${DEVICES} devices)`, `${base}/devices/status`],
      [`GET /vehicles (first page of 50)`, `${base}/vehicles`],
      [`GET /vehicles?limit=500`, `${base}/vehicles?limit=500`],
    ] as const;
    for (const [name, url] of endpoints) {
      // Trackers first, so the reads meet a pipeline already at speed; they stop with the reads.
      const load = withPipeline
        ? runTrackerLoad(pipeline.trackerPort, { devices: DEVICES, intervalMs: 100, recordsPerUpload: 10, durationMs: DURATION_MS + 4_000, warmupMs: 2_000, seed: SEED })
        : undefined;
      if (load) await new Promise((r) => setTimeout(r, 3_000));
      const result = await hammer(url, key, DURATION_MS);
      const trackers = await load;
      const latency = summarise(result.latencies);
      const ages = summarise(result.ages);
      rows.push({
        endpoint: name,
        'req/s': Math.round(result.latencies.length / (result.elapsedMs / 1000)),
        'p50 ms': Math.round(latency.p50 * 10) / 10,
        'p99 ms': Math.round(latency.p99 * 10) / 10,
        errors: result.errors,
        'oldest answer ms': result.ages.length > 0 ? Math.round(ages.max) : 'n/a',
        'pipeline positions/s': trackers ? Math.round(trackers.ackedPerSec) : 'idle',
        'ACK p99 ms': trackers ? Math.round(trackers.p99) : 'idle',
      });
    }
    await pipeline.stopIngest();
    await pipeline.stopEngine();
    await new Promise((resolve) => http.close(resolve));
  } finally {
    await queues.close();
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, queue: queues.kind, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Fleet-wide reads, ${CONCURRENCY} clients, ${DURATION_MS / 1000} s each, ${withPipeline ? 'while 1,000 trackers send 10,000 positions/s' : 'pipeline idle'}${viaGroups ? ', vehicles seen through a group' : ''}; ${handle.description}, queue ${queues.kind}\n`);
    console.table(rows);
  }
}

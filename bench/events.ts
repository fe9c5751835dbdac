import { serve } from '@hono/node-server';
import { EventSource } from 'eventsource';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createApp } from '../api/app.ts';
import { issueApiKey } from '../api/auth/api-key-token.ts';
import { EventFeed } from '../api/events/event-feed.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { createAccount } from '../db/accounts.ts';
import { insertApiKey } from '../db/api-keys.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createUser } from '../db/users.ts';
import { DeviceSignals } from '../engine/device-signals.ts';
import { bullmqQueues } from '../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import { EVENT_TYPES, OPT_IN_EVENT_TYPES } from '../domain/events/event-catalog.ts';
import { EngineQueues } from '../engine/engine-queues.ts';
import { startEngine } from '../engine/start-engine.ts';
import { startWebhookDelivery, WEBHOOK_CONCURRENCY_DEFAULT } from '../engine/webhooks/start-webhook-delivery.ts';
import { POSITION_WEBHOOK_DEFAULTS } from '../engine/webhooks/position-webhooks.ts';
import { newWebhookSecret } from '../engine/webhooks/webhook-secret.ts';
import { startIngest } from '../ingest/start-ingest.ts';
import { silentLogger } from '../runtime/logger.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { BenchNotifications, NOTIFIED_VEHICLES, type NotificationRow } from './event-notifications.ts';
import { seedGrid } from './geofence-grid.ts';
import { positionFeedRun, type PositionFeedRow } from './position-feed-run.ts';
import { freePort, runTrackerLoad } from './tracker-load.ts';

const SEED = 13;
const DURATION_MS = 25_000;
const WARMUP_MS = 5_000;
const CENTER = { lat: 19.43, lng: -99.13 };
const LOAD = { devices: 1_000, intervalMs: 100, recordsPerUpload: 10 }; // 10,000 fixes/s, the pipeline bench's first row

/**
 * Events from the log to their consumers at the pipeline bench's load: 1,000 simulated trackers
 * over TCP at 10,000 fixes/s through ingest and the engine, a geofence grid that turns them into
 * events, one EventSource on `GET /events/stream` over real HTTP, and one webhook delivering into a
 * local receiver. Delay is from the event's append (its `recorded_at`, just before its commit) to its
 * arrival, for events appended after the warm-up. A second run adds notifications for people (email
 * and SMS into local receivers, see event-notifications.ts); `--log`, `--notifications` and
 * `--positions` run only those runs.
 */
export default async function eventsBench(args: string[]): Promise<void> {
  const only = ['--log', '--notifications', '--positions'].filter((flag) => args.includes(flag));
  const runs = (flag: string) => only.length === 0 || only.includes(flag);
  if (runs('--log')) await logBench(args, false);
  if (runs('--notifications')) await logBench(args, true);
  if (runs('--positions')) await positionsBench(args);
}

async function logBench(args: string[], withNotifications: boolean): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const queues = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: `fleetcore-bench-${process.pid}` }) : inProcessQueues();
  const cleanup: Array<() => Promise<void> | void> = [];
  let row: Record<string, number> = {};
  let notificationRows: NotificationRow[] = [];
  try {
    await migrateToLatest(handle.db);
    const db = handle.db;
    const account = await createAccount(db, `Events bench ${Date.now()}`);
    const user = await createUser(db, { accountId: account.id, email: `bench-${Date.now()}@example.com`, timezone: 'UTC' });
    const issued = issueApiKey('live');
    await insertApiKey(db, { userId: user.id, prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['*'] });
    // Devices of an earlier run move to this run's account and user.
    await ensureSimulatedDevices(db, account.id, SEED, LOAD.devices);
    await sql`UPDATE devices SET account_id = ${account.id} WHERE imei LIKE ${`35${String(SEED).padStart(4, '0')}%`}`.execute(db);
    await sql`INSERT INTO user_device_grants (user_id, device_id) SELECT ${user.id}, id FROM devices WHERE account_id = ${account.id} ON CONFLICT DO NOTHING`.execute(db);
    // Denser than the pipeline bench's grid, for about 200 events/s from the same 10,000 fixes/s.
    const geofences = await seedGrid(db, account.id, CENTER, 0.0015);
    await sql`
      INSERT INTO device_engine_states (device_id, cursor_fix_time)
      SELECT s.device_id, s.fix_time FROM device_states s JOIN devices d ON d.id = s.device_id WHERE d.account_id = ${account.id}
      ON CONFLICT (device_id) DO UPDATE SET cursor_fix_time = excluded.cursor_fix_time, inside = '{}', pending = '[]'
    `.execute(db);

    // The webhook receiver.
    const webhookArrivals = new Map<string, number>();
    const receiver = createServer((req, res) => {
      const id = String(req.headers['webhook-id']);
      req.resume();
      req.on('end', () => {
        if (!webhookArrivals.has(id)) webhookArrivals.set(id, Date.now());
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    await db.insertInto('webhooks').values({
      account_id: account.id, user_id: user.id, mode: 'live', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['vehicle.*'], description: 'bench', secret: newWebhookSecret(),
    }).execute();

    const engine = await startEngine(handle, queues, silentLogger, {
      status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, eta: { roadFactor: 1.3, defaultSpeedKmh: 40 },
      etaRefreshMs: 30_000, inactivitySweepMs: 60_000, geofencePollMs: 500, concurrency: 2, fixesPerDevice: 1000, lateWindowMs: 3_600_000,
      retention: { geofenceChangesMs: 86_400_000, lateFixesMs: 7 * 86_400_000 }, pruneIntervalMs: 3_600_000,
    });
    cleanup.push(() => engine.close());
    const webhooks = await startWebhookDelivery(handle, queues, silentLogger, {
      // As `fleet serve` sends them by default.
      timeoutMs: 15_000, allowPrivate: true, concurrency: WEBHOOK_CONCURRENCY_DEFAULT, perWebhookInFlight: WEBHOOK_CONCURRENCY_DEFAULT, maxConsecutiveFailures: 1_000,
      fanOutPollMs: 100, sweepMs: 30_000,
    });
    cleanup.push(() => webhooks.close());

    const notifications = withNotifications ? await BenchNotifications.open() : undefined;
    if (notifications) cleanup.push(() => notifications.close(handle));
    const eventFeed = await EventFeed.open(db, silentLogger, handle.pool, { pollMs: handle.pool ? 250 : 100 });
    cleanup.push(() => eventFeed.close());
    const app = createApp({
      db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1e9, 10_000), eventFeed,
      ...(notifications ? { notifications: notifications.server } : {}),
      config: { bodyLimitBytes: 65_536, deviceStatus: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, onTimeToleranceMinutes: 5 },
    });
    const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => http.once('listening', () => resolve()));
    cleanup.push(() => {
      http.close();
      (http as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
    if (notifications) {
      const { rows: vehicles } = await sql<{ imei: string }>`SELECT imei FROM devices WHERE account_id = ${account.id} ORDER BY imei`.execute(db);
      const api = { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1`, key: issued.key };
      await notifications.start(handle, api, user.id, vehicles.map((v) => v.imei));
    }
    const streamArrivals = new Map<string, number>();
    const source = new EventSource(`http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1/events/stream?types=vehicle.*`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${issued.key}` } }),
    });
    cleanup.push(() => source.close());
    // Every kind the webhook also receives (`vehicle.*`), so both consumers are counted on the same events.
    for (const type of EVENT_TYPES.filter((t) => t.startsWith('vehicle.') && !OPT_IN_EVENT_TYPES.has(t))) {
      source.addEventListener(type, (e) => streamArrivals.set(e.lastEventId, Date.now()));
    }
    await new Promise<void>((resolve, reject) => {
      source.addEventListener('open', () => resolve(), { once: true });
      source.addEventListener('error', (e) => reject(new Error(`stream: ${(e as { message?: string }).message}`)), { once: true });
    });

    const signals = new DeviceSignals(new EngineQueues(queues), () => undefined);
    const ingest = await startIngest(handle, silentLogger, {
      host: '127.0.0.1', ports: { teltonika: await freePort() }, osmandPort: 0,
      limits: { idleTimeoutMs: 120_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 5,
      onDevicesUpdated: (ids) => signals.add(ids),
    });
    const { rows: start } = await sql<{ id: string }>`SELECT coalesce(max(id), 0)::text AS id FROM events`.execute(db);
    const startedAt = Date.now();
    const load = await runTrackerLoad(ingest.listeners[0]!.port, { ...LOAD, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: SEED });
    const seconds = (Date.now() - startedAt) / 1000;
    await ingest.close();
    await signals.close();

    // Every event appended during the load, once both consumers have had it (or 60 s have passed).
    const appended = async () =>
      (await sql<{ id: string; recorded_at: Date }>`SELECT id::text AS id, recorded_at FROM events WHERE id > ${start[0]!.id}::bigint AND type LIKE 'vehicle.%' AND account_id = ${account.id}`.execute(db)).rows;
    let events = await appended();
    const deadline = Date.now() + 60_000;
    const waiting = async () => events.some((e) => !streamArrivals.has(e.id) || !webhookArrivals.has(e.id)) || (notifications !== undefined && !(await notifications.settled(handle)));
    while (Date.now() < deadline && (await waiting())) {
      await new Promise((r) => setTimeout(r, 250));
      events = await appended();
    }
    const timed = events.filter((e) => e.recorded_at.getTime() >= startedAt + WARMUP_MS);
    const delays = (arrivals: Map<string, number>) => summarise(timed.filter((e) => arrivals.has(e.id)).map((e) => arrivals.get(e.id)! - e.recorded_at.getTime()));
    if (notifications) {
      notificationRows = await notifications.results(handle, { timedFrom: startedAt + WARMUP_MS, loadStart: startedAt, loadEnd: startedAt + seconds * 1000 });
    }
    const stream = delays(streamArrivals);
    const hooks = delays(webhookArrivals);
    row = {
      positionsPerSec: Math.round(load.ackedPerSec),
      eventsPerSec: Math.round(events.length / seconds),
      streamReceived: events.filter((e) => streamArrivals.has(e.id)).length,
      streamP50Ms: Math.round(stream.p50),
      streamP99Ms: Math.round(stream.p99),
      webhookReceived: events.filter((e) => webhookArrivals.has(e.id)).length,
      webhookP50Ms: Math.round(hooks.p50),
      webhookP99Ms: Math.round(hooks.p99),
      eventsLogged: events.length,
      geofences,
    };
  } finally {
    for (const stop of cleanup.reverse()) await stop();
    await queues.close();
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const notified = withNotifications ? { notifications: notificationRows } : {};
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, queue: queues.kind, row, ...notified }, null, 2)}\n`);
  else {
    const also = withNotifications ? `, and → people (vehicle.*: email via SMTP on ${NOTIFIED_VEHICLES.email} vehicles, SMS via an HTTP gateway on ${NOTIFIED_VEHICLES.sms}; local receivers)` : '';
    process.stdout.write(`Events at ${LOAD.devices * (1000 / LOAD.intervalMs)} fixes/s: log → stream (EventSource) and → webhook (local receiver)${also}; ${handle.description}, ${queues.kind} queue, ${DURATION_MS / 1000} s\n`);
    console.table([row]);
    if (withNotifications) {
      process.stdout.write('Notifications: delay from the event\'s recorded_at to the message at the receiver; failed and pending left at the end\n');
      console.table(notificationRows);
    }
  }
}

const POSITION_SEED = 17;

/**
 * vehicle.position at the same 10,000 fixes/s: the pipeline without the feed, then with one webhook
 * naming vehicle.position and one stream of them (see position-feed-run.ts). `--positions` runs only these.
 */
async function positionsBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const queues = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: `fleetcore-bench-${process.pid}` }) : inProcessQueues();
  const rows: PositionFeedRow[] = [];
  try {
    await migrateToLatest(handle.db);
    const db = handle.db;
    const account = await createAccount(db, `Position feed bench ${Date.now()}`);
    const user = await createUser(db, { accountId: account.id, email: `bench-positions-${Date.now()}@example.com`, timezone: 'UTC' });
    const issued = issueApiKey('live');
    await insertApiKey(db, { userId: user.id, prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['*'] });
    await ensureSimulatedDevices(db, account.id, POSITION_SEED, LOAD.devices);
    await sql`UPDATE devices SET account_id = ${account.id} WHERE imei LIKE ${`35${String(POSITION_SEED).padStart(4, '0')}%`}`.execute(db);
    await sql`INSERT INTO user_device_grants (user_id, device_id) SELECT ${user.id}, id FROM devices WHERE account_id = ${account.id} ON CONFLICT DO NOTHING`.execute(db);
    const tenant = { accountId: account.id, userId: user.id, key: issued.key };
    for (const withFeed of [false, true]) {
      // The engine starts each run caught up, as the log run does.
      await sql`
        INSERT INTO device_engine_states (device_id, cursor_fix_time)
        SELECT s.device_id, s.fix_time FROM device_states s JOIN devices d ON d.id = s.device_id WHERE d.account_id = ${account.id}
        ON CONFLICT (device_id) DO UPDATE SET cursor_fix_time = excluded.cursor_fix_time
      `.execute(db);
      rows.push(await positionFeedRun(handle, queues, tenant, { ...LOAD, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: POSITION_SEED }, withFeed));
    }
  } finally {
    await queues.close();
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const [without, withFeed] = rows;
  const throughputChange = without && withFeed ? Math.round(((withFeed.positionsPerSec - without.positionsPerSec) / without.positionsPerSec) * 1000) / 10 : undefined;
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, queue: queues.kind, positions: rows, throughputChangePercent: throughputChange }, null, 2)}\n`);
  else {
    process.stdout.write(`vehicle.position at ${LOAD.devices * (1000 / LOAD.intervalMs)} fixes/s: one webhook (batches of ${POSITION_WEBHOOK_DEFAULTS.batchSize}, signatures verified) and one stream; ${handle.description}, ${queues.kind} queue, ${process.env.REDIS_URL ? 'feed through Redis' : 'feed in process'}, ${DURATION_MS / 1000} s\n`);
    console.table(rows);
    process.stdout.write(`throughput with the feed vs without: ${throughputChange}%\n`);
  }
}

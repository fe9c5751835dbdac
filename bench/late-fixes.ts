import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAccount } from '../db/accounts.ts';
import { openDatabase } from '../db/database.ts';
import { addDevice } from '../db/devices.ts';
import { fixBatchWriter } from '../db/fix-batch-writer.ts';
import { insertGeofence } from '../db/geofences.ts';
import { migrateToLatest } from '../db/migrator.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';

const DEVICES = 200;
/** An hour of history per device at one fix every 5 s. */
const HISTORY = 720;
/** Fixes per device that arrive late, in one minute, 30 minutes behind the cursor. */
const LATE = 12;
const SETTINGS = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, lateWindowMs: 3_600_000 };
const T0 = Date.parse('2024-08-01T08:00:00Z');

/**
 * What late fixes cost the engine: the same job (evaluateDevices over every device, 500 per
 * transaction, as the engine runs it) once with LATE fixes per device in order, and once with LATE
 * fixes per device that arrived late (filling a dead-zone minute ~30 minutes behind the cursor, and
 * crossing a geofence in it), so the late path reads the half hour of positions and crossings after them. PostgreSQL with DATABASE_URL.
 */
export default async function lateFixesBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  let rows: Array<Record<string, string | number>> = [];
  try {
    await migrateToLatest(handle.db);
    const account = await createAccount(handle.db, 'Late fixes bench');
    await insertGeofence(handle.db, { accountId: account.id, name: 'Depot', shape: { kind: 'circle', lat: 19.43, lng: -99.13, radiusMeters: 300 } });
    const ids: number[] = [];
    for (let i = 0; i < DEVICES; i++) {
      ids.push((await addDevice(handle.db, { accountId: account.id, imei: `77${String(i).padStart(13, '0')}`, name: `Late ${i}`, mode: 'live' })).device.id);
    }
    const write = fixBatchWriter(handle);
    // Outside the depot, 2 km east of it, all along; then the late minute goes through it.
    const fix = (deviceId: number, second: number, inside: boolean): StoredFix => ({
      deviceId, fixTime: new Date(T0 + second * 1000), receivedAt: new Date(), valid: true, latitude: 19.43, longitude: inside ? -99.13 : -99.11, speedKmh: 30, attributes: {},
    });
    const catalog = await GeofenceCatalog.open(handle.db, silentLogger, handle.pool, { pollMs: 60_000 });
    const evaluate = async () => {
      const started = performance.now();
      for (let i = 0; i < ids.length; i += 500) await evaluateDevices(handle.db, catalog, ids.slice(i, i + 500), SETTINGS);
      return performance.now() - started;
    };
    // The hour of history has a minute missing half-way (a dead zone): the late fixes fill it.
    const gap = (n: number) => n >= HISTORY / 2 && n < HISTORY / 2 + LATE;
    for (let from = 0; from < HISTORY; from += 60) {
      await write(ids.flatMap((id) => Array.from({ length: 60 }, (_, k) => from + k).filter((n) => !gap(n)).map((n) => fix(id, n * 5, false))), []);
    }
    await evaluate();

    // In order: LATE more fixes after the cursor.
    await write(ids.flatMap((id) => Array.from({ length: LATE }, (_, k) => fix(id, (HISTORY + k) * 5, false))), []);
    const inOrderMs = await evaluate();
    // Late: the dead zone's minute, ~30 minutes behind the cursor, through the depot in its middle.
    await write(ids.flatMap((id) => Array.from({ length: LATE }, (_, k) => fix(id, (HISTORY / 2 + k) * 5, k > 2 && k < LATE - 3))), []);
    const lateMs = await evaluate();
    await catalog.close();
    const events = (await handle.db.selectFrom('geofence_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    const row = (what: string, ms: number) => ({ fixes: what, devices: DEVICES, fixesPerDevice: LATE, totalMs: +ms.toFixed(1), msPerDevice: +(ms / DEVICES).toFixed(2), fixesPerSec: Math.round((DEVICES * LATE) / (ms / 1000)) });
    rows = [row('in order', inOrderMs), row('late (30 min behind)', lateMs)];
    if (events !== DEVICES * 2) throw new Error(`expected ${DEVICES * 2} events from the late fixes, got ${events}`);
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Engine evaluation of ${LATE} fixes on each of ${DEVICES} devices with an hour of history, ${handle.description}\n`);
    console.table(rows);
  }
}

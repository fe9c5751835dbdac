import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createAccount } from '../db/accounts.ts';
import { openDatabase } from '../db/database.ts';
import { addDevice } from '../db/devices.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { checkMaintenance } from '../engine/workers/check-maintenance.ts';

const VEHICLES = 5_000;
/** Per vehicle: an oil change by odometer and an inspection by the calendar. */
const ITEMS_PER_VEHICLE = 2;
const RUNS = 10;
/** The share of vehicles driven past their oil change's threshold between two checks. */
const CROSSING = 0.1;

const stats = (ms: number[]) => {
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  const sd = Math.sqrt(ms.reduce((a, b) => a + (b - mean) ** 2, 0) / ms.length);
  return { minMs: +Math.min(...ms).toFixed(1), meanMs: +mean.toFixed(1), sdMs: +sd.toFixed(1) };
};

/**
 * The engine's repeated maintenance check (engine/workers/check-maintenance.ts) over a fleet of
 * VEHICLES with ITEMS_PER_VEHICLE items each: a check that finds nothing (the cost paid every
 * MAINTENANCE_CHECK_S), one that finds CROSSING of the vehicles past a threshold and logs their
 * events, and the quiet check after it. PostgreSQL with DATABASE_URL, else embedded.
 */
export default async function maintenanceCheckBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const rows: Array<Record<string, string | number>> = [];
  let accountId: number | undefined;
  try {
    await migrateToLatest(handle.db);
    const db = handle.db;
    const account = await createAccount(db, 'Maintenance bench');
    accountId = account.id;
    const ids: number[] = [];
    for (let i = 0; i < VEHICLES; i++) {
      ids.push((await addDevice(db, { accountId: account.id, imei: `78${String(i).padStart(13, '0')}`, name: `Truck ${i}`, mode: 'live' })).device.id);
    }
    // Each vehicle's tracker reports its odometer: 100,000 km plus a little, 500 km short of its oil change.
    await sql`
      UPDATE device_states SET odometer_km = 100000 + device_id % 1000, fix_time = now(), latitude = 19.43, longitude = -99.13, speed_kmh = 0, valid = true
      WHERE device_id = ANY(${ids})
    `.execute(db);
    await sql`
      INSERT INTO maintenance_items (device_id, name, kind, interval, tolerance, next_due, next_due_date)
      SELECT id, 'Oil change', 'odometer', 10000, 1000, 100500 + id % 1000, NULL FROM unnest(${ids}::int[]) AS id
      UNION ALL
      SELECT id, 'Inspection', 'calendar', 180, 18, NULL, current_date + 30 FROM unnest(${ids}::int[]) AS id
    `.execute(db);

    const timed = async () => {
      const started = performance.now();
      const events = await checkMaintenance(db);
      return { ms: performance.now() - started, events };
    };
    const quiet = async (what: string) => {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await timed());
      if (runs.some((r) => r.events !== 0)) throw new Error(`${what}: a quiet check logged events`);
      rows.push({ check: what, items: VEHICLES * ITEMS_PER_VEHICLE, events: 0, runs: RUNS, ...stats(runs.map((r) => r.ms)) });
    };
    await timed(); // warm-up
    await quiet('nothing due');
    const crossing = ids.slice(0, Math.round(VEHICLES * CROSSING));
    await sql`UPDATE device_states SET odometer_km = odometer_km + 600 WHERE device_id = ANY(${crossing})`.execute(db);
    const found = await timed();
    if (found.events !== crossing.length) throw new Error(`expected ${crossing.length} due events, got ${found.events}`);
    rows.push({ check: `${crossing.length} vehicles past a threshold`, items: VEHICLES * ITEMS_PER_VEHICLE, events: found.events, runs: 1, ...stats([found.ms]) });
    await quiet('after (their due logged)');
  } finally {
    // A DATABASE_URL may be a shared development database: what the run made goes.
    if (accountId !== undefined) {
      await sql`DELETE FROM events WHERE account_id = ${accountId}`.execute(handle.db);
      await sql`DELETE FROM devices WHERE account_id = ${accountId}`.execute(handle.db);
      await sql`DELETE FROM accounts WHERE id = ${accountId}`.execute(handle.db);
    }
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`The maintenance check over ${VEHICLES} vehicles with ${ITEMS_PER_VEHICLE} items each, ${handle.description}\n`);
    console.table(rows);
  }
}

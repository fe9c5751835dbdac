import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.ts';
import { fixBatchWriter } from '../db/fix-batch-writer.ts';
import { migrateToLatest } from '../db/migrator.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { positionHistorySize, type PositionHistorySize } from '../db/position-partitions.ts';
import { teltonika } from '../ingest/protocols/teltonika/teltonika.ts';
import { storedFix } from '../ingest/stored-fix.ts';
import { Drive, type Point } from '../simulators/drive.ts';
import { teltonikaCodec8 } from '../simulators/teltonika-packets.ts';
import { openEmptyDatabase } from '../db/empty-database.ts';
import { fixtures } from '../simulators/fleet-records.ts';

const DEVICES = 250;
/** 800 fixes per device at 10 s: 2 h 13 min of driving and parking, 200,000 fixes in all. */
const TICKS = 800;
const INTERVAL_S = 10;
/** Rows per write: INGEST_BATCH_ROWS' default. */
const BATCH_ROWS = 1_000;
const SEED = 7;
/** The fleet: 10,000 trackers reporting every 10 s. */
const FLEET_FIXES_PER_DAY = (10_000 * 86_400) / INTERVAL_S;
const RETENTION_DAYS = 90;
const GIB = 2 ** 30;

/**
 * Fixes as ingest stores them: each vehicle drives between stops around Mexico City (simulators/
 * drive.ts), its tracker sends every fix as a Teltonika Codec 8 packet (ignition, movement, power,
 * odometer), the packet is decoded by the real decoder and made a row by ingest's own conversion, and
 * rows are written 1,000 at a time by the batch writer ingest uses (COPY on PostgreSQL, INSERT on the
 * embedded database). Every tracker reports in each 10 s tick, so a batch interleaves devices as a
 * live fleet does: the primary key's pages split as they do in production, not as a device-by-device
 * load would leave them (packed 90 % full).
 */
async function writeFleet(handle: DatabaseHandle, start: number): Promise<{ fixes: number; seconds: number }> {
  let seed = SEED;
  const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const stops: Point[] = Array.from({ length: 40 }, () => ({ latitude: 19.3 + random() * 0.25, longitude: -99.25 + random() * 0.25 }));
  const make = fixtures(handle.db);
  const { account } = await make.tenant('UTC');
  const vehicles = [];
  for (let i = 0; i < DEVICES; i++) {
    const device = await make.device(account.id, { name: `Storage ${i}` });
    vehicles.push({ device, session: { deviceId: device.imei, options: {} }, drive: new Drive(stops, random, stops[Math.floor(random() * stops.length)]!) });
  }
  const write = fixBatchWriter(handle);
  const ignoreOutOfRange = () => undefined;
  const began = performance.now();
  let fixes = 0;
  let batch: StoredFix[] = [];
  for (let tick = 0; tick < TICKS; tick++) {
    const now = new Date(start + tick * INTERVAL_S * 1000);
    const receivedAt = new Date(now.getTime() + 1_200);
    for (const { device, session, drive } of vehicles) {
      const decoded = teltonika.decode(teltonikaCodec8([drive.advance(now, INTERVAL_S)]), session);
      for (const p of decoded.positions) batch.push(storedFix(device.id, p, receivedAt, ignoreOutOfRange));
    }
    if (batch.length >= BATCH_ROWS || tick === TICKS - 1) {
      await write(batch, []);
      fixes += batch.length;
      batch = [];
    }
  }
  return { fixes, seconds: (performance.now() - began) / 1000 };
}

const perFix = (bytes: number, fixes: number) => +(bytes / fixes).toFixed(1);
const gib = (bytes: number) => +(bytes / GIB).toFixed(1);

/**
 * `npm run bench -- storage`: what a stored fix costs on disk. 200,000 fixes written through the real
 * path into a fresh database (its own on DATABASE_URL's server, dropped afterwards; or a fresh
 * embedded one), then every position partition measured with pg_total_relation_size (heap with its
 * maps, primary key, TOAST) after VACUUM ANALYZE, as autovacuum leaves a day's partition. Sizes are
 * the growth over the empty partitions, divided by the fixes stored, and projected to a day of
 * 10,000 trackers at 10 s (86.4 million fixes) and to 90 days of retention.
 */
export default async function positionStorageBench(args: string[]): Promise<void> {
  const handle = await openEmptyDatabase();
  try {
    await migrateToLatest(handle.db);
    // Today's partition exists (the migration makes a week ahead): the fixes land in it, not the default one.
    const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const empty = await positionHistorySize(handle.db);
    const written = await writeFleet(handle, today);
    await sql`VACUUM ANALYZE positions`.execute(handle.db);
    const full = await positionHistorySize(handle.db);
    if (full.rows !== written.fixes) throw new Error(`${written.fixes} fixes written, ${full.rows} stored`);
    const { rows } = await sql<{ tuple: number; attributes: number }>`
      SELECT avg(pg_column_size(p.*))::float8 AS tuple, avg(pg_column_size(p.attributes))::float8 AS attributes FROM positions p
    `.execute(handle.db);
    const grown = (pick: (s: PositionHistorySize) => number) => pick(full) - pick(empty);
    const bytesPerFix = grown((s) => s.totalBytes) / written.fixes;
    const result = {
      database: handle.kind,
      fixes: written.fixes,
      writtenPerSec: Math.round(written.fixes / written.seconds),
      bytesPerFix: {
        heap: perFix(grown((s) => s.heapBytes), written.fixes),
        primaryKey: perFix(grown((s) => s.indexBytes), written.fixes),
        toast: perFix(grown((s) => s.toastBytes), written.fixes),
        total: +bytesPerFix.toFixed(1),
      },
      rowBytes: { tuple: +rows[0]!.tuple.toFixed(1), attributes: +rows[0]!.attributes.toFixed(1) },
      fleetDayGiB: gib(bytesPerFix * FLEET_FIXES_PER_DAY),
      fleetRetentionGiB: gib(bytesPerFix * FLEET_FIXES_PER_DAY * RETENTION_DAYS),
    };
    if (args.includes('--json')) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    process.stdout.write(
      `Position storage, ${result.fixes.toLocaleString('en')} fixes of ${DEVICES} trackers every ${INTERVAL_S} s (Teltonika Codec 8, ingest's writer), ${handle.description}\n`,
    );
    console.table([
      { measure: 'heap bytes per fix (rows, free-space and visibility maps)', value: result.bytesPerFix.heap },
      { measure: 'primary key bytes per fix (device_id, fix_time)', value: result.bytesPerFix.primaryKey },
      { measure: 'TOAST bytes per fix', value: result.bytesPerFix.toast },
      { measure: 'total bytes per fix (pg_total_relation_size)', value: result.bytesPerFix.total },
      { measure: 'row as stored: tuple / attributes JSON (bytes)', value: `${result.rowBytes.tuple} / ${result.rowBytes.attributes}` },
      { measure: 'a day of 10,000 trackers at 10 s (86.4 M fixes), GiB', value: result.fleetDayGiB },
      { measure: `${RETENTION_DAYS} days of them (POSITIONS_RETENTION_DAYS), GiB`, value: result.fleetRetentionGiB },
      { measure: 'written per second (decode + batch writer)', value: result.writtenPerSec },
    ]);
  } finally {
    await handle.destroy();
  }
}

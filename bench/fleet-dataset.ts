import { copyFixBatch } from '../db/position-copy.ts';
import { storeFixBatch } from '../db/position-batches.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';

export interface FleetDataset {
  key: string;
  imeis: string[];
  fixes: number;
  trips: number;
  /** Seconds spent storing the fixes, and segmenting them in the engine. */
  storeS: number;
  segmentS: number;
  /** The first and last day (ISO dates) the fixes cover. */
  firstDay: string;
  lastDay: string;
}

/** Minutes after midnight (UTC) at which each day's trips leave; each lasts 20 minutes. */
const DEPARTURES = [7 * 60, 10 * 60, 13 * 60, 16 * 60];
const TRIP_MINUTES = 20;
/** A fix every 2 minutes while driving at 50 km/h, one an hour while parked. */
const DRIVING_STEP_MIN = 2;
const KMH = 50;
const DEG_PER_STEP = ((KMH / 60) * DRIVING_STEP_MIN * 1000) / 111_195;

/**
 * A fleet with `days` of history, written through the same batch writers ingest uses (COPY on
 * PostgreSQL, multi-row INSERT on the embedded database), then segmented into trips and stops by the
 * engine's own evaluation: four 20-minute trips a day per vehicle (out and back, twice), parked
 * fixes hourly in between.
 */
export async function buildFleetDataset(handle: DatabaseHandle, vehicles: number, days: number, progress: (line: string) => void): Promise<FleetDataset> {
  const f = fixtures(handle.db);
  const { account, key } = await f.tenant('UTC');
  const devices = [];
  for (let i = 0; i < vehicles; i++) devices.push(await f.device(account.id, { name: `Fleet ${String(i).padStart(5, '0')}`, plates: `FL-${i}` }));
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const firstDay = today - days * 86_400_000;

  const write = async (batch: StoredFix[]) => {
    if (handle.pool) await copyFixBatch(handle.pool, handle.db, batch, []);
    else await storeFixBatch(handle.db, batch);
  };
  const storeStart = performance.now();
  let fixes = 0;
  let batch: StoredFix[] = [];
  for (const [v, device] of devices.entries()) {
    const baseLat = -30 + (v % 100) * 0.5;
    const lng = -60 + Math.floor(v / 100) * 0.5;
    for (let d = 0; d < days; d++) {
      const midnight = firstDay + d * 86_400_000;
      const fix = (minute: number, lat: number, speedKmh: number, ignition: boolean) => {
        const t = new Date(midnight + minute * 60_000);
        batch.push({ deviceId: device.id, receivedAt: t, fixTime: t, valid: true, latitude: lat, longitude: lng, altitude: null, speedKmh, heading: 0, satellites: 9, ignition, attributes: {} });
      };
      let parkedAt = baseLat;
      let minute = 0;
      for (const [k, departure] of DEPARTURES.entries()) {
        for (; minute < departure; minute += 60) fix(minute, parkedAt, 0, false);
        const direction = k % 2 === 0 ? 1 : -1;
        for (let s = 0; s <= TRIP_MINUTES / DRIVING_STEP_MIN; s++) {
          const moving = s < TRIP_MINUTES / DRIVING_STEP_MIN;
          fix(departure + s * DRIVING_STEP_MIN, parkedAt + direction * s * DEG_PER_STEP, moving ? KMH : 0, moving);
        }
        parkedAt += direction * (TRIP_MINUTES / DRIVING_STEP_MIN) * DEG_PER_STEP;
        minute = departure + 60;
      }
      for (; minute < 24 * 60; minute += 60) fix(minute, parkedAt, 0, false);
    }
    if (batch.length >= 5_000 || v === devices.length - 1) {
      batch.sort((a, b) => a.fixTime.getTime() - b.fixTime.getTime());
      await write(batch);
      fixes += batch.length;
      batch = [];
      if (v % 100 === 99) progress(`  stored the fixes of ${v + 1} vehicles (${fixes.toLocaleString('en')} fixes)`);
    }
  }
  const storeS = (performance.now() - storeStart) / 1000;

  const catalog = await GeofenceCatalog.open(handle.db, silentLogger, undefined, { pollMs: 3_600_000 });
  const segmentStart = performance.now();
  const settings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 5_000, lateWindowMs: 3_600_000 };
  const ids = devices.map((d) => d.id);
  const perJob = 20;
  const lanes = 2;
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < ids.length) {
        const chunk = ids.slice(next, next + perJob);
        next += perJob;
        let pending = chunk;
        while (pending.length > 0) pending = (await evaluateDevices(handle.db, catalog, pending, settings)).unfinished;
        if (next % 200 === 0) progress(`  segmented ${Math.min(next, ids.length)} vehicles`);
      }
    }),
  );
  const segmentS = (performance.now() - segmentStart) / 1000;
  await catalog.close();
  const trips = Number((await handle.db.selectFrom('trips').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  return {
    key,
    imeis: devices.map((d) => d.imei),
    fixes,
    trips,
    storeS,
    segmentS,
    firstDay: new Date(firstDay).toISOString().slice(0, 10),
    lastDay: new Date(today - 86_400_000).toISOString().slice(0, 10),
  };
}

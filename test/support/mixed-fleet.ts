import { fixBatchWriter } from '../../db/fix-batch-writer.ts';
import type { StoredFix } from '../../domain/stored-rows.ts';
import { seededRandom } from '../../runtime/seeded-random.ts';
import { fixtures } from '../../simulators/fleet-records.ts';
import type { DatabaseHandle } from '../../db/database.ts';

const CENTER = { lat: 19.4, lng: -99.1 };

/**
 * An account with a grid of geofences (circles and squares, one with a dwell time) and a fleet whose
 * seeded random walks cross them; its fixes include invalid ones and late arrivals older than fixes
 * already sent. The same seed builds the same fleet in any database.
 */
export async function seedMixedFleet(database: DatabaseHandle, seed: number, devices: number, fixesPerDevice: number) {
  const make = fixtures(database.db);
  const account = await make.account();
  const user = await make.user(account.id);
  for (let i = 0; i < 9; i++) {
    const lat = CENTER.lat + Math.floor(i / 3) * 0.01;
    const lng = CENTER.lng + (i % 3) * 0.01;
    const shape = i % 2 === 0
      ? ({ kind: 'circle', lat, lng, radiusMeters: 400 } as const)
      : ({ kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[lng - 0.003, lat - 0.003], [lng + 0.003, lat - 0.003], [lng + 0.003, lat + 0.003], [lng - 0.003, lat + 0.003], [lng - 0.003, lat - 0.003]]] } } as const);
    const geofence = await make.geofence(account.id, `Zone ${seed}-${i}`, shape);
    if (i === 4) await database.db.updateTable('geofences').set({ enter_dwell_s: 20, exit_dwell_s: 20 }).where('id', '=', geofence.id).execute();
  }
  const random = seededRandom(seed);
  const deviceIds: number[] = [];
  const fixes: StoredFix[] = [];
  const start = Date.UTC(2024, 4, 1, 12);
  for (let d = 0; d < devices; d++) {
    const device = await make.device(account.id, { userIds: [user.id], imei: `35${String(seed).padStart(4, '0')}${String(d).padStart(9, '0')}` });
    deviceIds.push(device.id);
    let lat = CENTER.lat + random() * 0.02;
    let lng = CENTER.lng + random() * 0.02;
    for (let k = 0; k < fixesPerDevice; k++) {
      lat += (random() - 0.5) * 0.004;
      lng += (random() - 0.5) * 0.004;
      // Every 7th fix arrives late: its time is before the previous fix's.
      const t = k % 7 === 6 ? start + (k - 2) * 10_000 + 5_000 : start + k * 10_000;
      fixes.push({
        deviceId: device.id, receivedAt: new Date(), fixTime: new Date(t), valid: random() > 0.05, latitude: lat, longitude: lng,
        speedKmh: random() * 60, heading: 0, satellites: 8, ignition: random() > 0.2, attributes: {},
      });
    }
  }
  return { accountId: account.id, deviceIds, fixes, write: (rows: StoredFix[]) => fixBatchWriter(database)(rows, []) };
}

/** The engine's output tables of an account, in a stable order, for comparing two runs row for row. */
export async function engineOutput(database: DatabaseHandle, accountId: number) {
  const events = await database.db
    .selectFrom('geofence_events as e').innerJoin('devices as d', 'd.id', 'e.device_id').innerJoin('geofences as g', 'g.id', 'e.geofence_id')
    .select(['d.imei', 'g.name', 'e.type', 'e.fix_time', 'e.latitude', 'e.longitude'])
    .where('d.account_id', '=', accountId).orderBy('d.imei').orderBy('e.fix_time').orderBy('g.name').orderBy('e.type').execute();
  const visits = await database.db
    .selectFrom('geofence_visits as v').innerJoin('devices as d', 'd.id', 'v.device_id').innerJoin('geofences as g', 'g.id', 'v.geofence_id')
    .select(['d.imei', 'g.name', 'v.entry_time', 'v.exit_time'])
    .where('d.account_id', '=', accountId).orderBy('d.imei').orderBy('v.entry_time').orderBy('g.name').execute();
  return { events, visits };
}

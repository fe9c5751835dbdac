import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../runtime/logger.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
let catalog: GeofenceCatalog;

beforeAll(async () => {
  database = await openTestDatabase();
  catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 200 });
});
afterAll(async () => {
  await catalog?.close();
  await database?.destroy();
});

const inside = (accountId: number, lat: number, lng: number) => {
  const out = new Int32Array(16);
  const index = catalog.index(accountId, 'live');
  return index ? [...out.subarray(0, index.query(lat, lng, out))] : [];
};

async function within(ms: number, check: () => boolean): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

describe('the geofence catalog', () => {
  it('follows geofences created, changed, given a dwell time and deleted in the database within a second', async () => {
    const { account } = await fixtures(database.db).tenant();
    const fence = await fixtures(database.db).geofence(account.id, 'Depot', { kind: 'circle', lat: 19.4, lng: -99.1, radiusMeters: 200 });
    await within(1_000, () => inside(account.id, 19.4, -99.1).includes(fence.id));

    // Moved by hand in SQL, as an operator might: the trigger still tells the engine.
    await sql`UPDATE geofences SET geom = ST_Buffer(ST_SetSRID(ST_MakePoint(-99.2, 19.5), 4326), 0.01), kind = 'polygon' WHERE id = ${fence.id}`.execute(database.db);
    await within(1_000, () => inside(account.id, 19.5, -99.2).includes(fence.id) && !inside(account.id, 19.4, -99.1).includes(fence.id));

    await database.db.updateTable('geofences').set({ enter_dwell_s: 30 }).where('id', '=', fence.id).execute();
    await within(1_000, () => catalog.dwellRules.get(fence.id)?.enterMs === 30_000);

    await database.db.deleteFrom('geofences').where('id', '=', fence.id).execute();
    await within(1_000, () => inside(account.id, 19.5, -99.2).length === 0 && !catalog.dwellRules.has(fence.id));
  });
});

describe.skipIf(!process.env.DATABASE_URL)('the geofence catalog under concurrent changes (PostgreSQL)', () => {
  // On the embedded database transactions run one at a time, so two cannot commit out of order.
  it('applies a change whose transaction got the lower log id but committed last', async () => {
    const { account } = await fixtures(database.db).tenant();
    const [early, late] = [
      await fixtures(database.db).geofence(account.id, 'Early', { kind: 'circle', lat: 19.4, lng: -99.1, radiusMeters: 200 }),
      await fixtures(database.db).geofence(account.id, 'Late', { kind: 'circle', lat: 19.6, lng: -99.3, radiusMeters: 200 }),
    ];
    await catalog.refresh();
    const slow = await database.pool!.connect();
    try {
      // The slow transaction logs its change first (lower id) and commits after the fast one.
      await slow.query('BEGIN');
      await slow.query(`UPDATE geofences SET geom = ST_Buffer(ST_SetSRID(ST_MakePoint(-99.15, 19.45), 4326), 0.005), kind = 'polygon' WHERE id = $1`, [early.id]);
      await database.pool!.query(`UPDATE geofences SET geom = ST_Buffer(ST_SetSRID(ST_MakePoint(-99.35, 19.65), 4326), 0.005), kind = 'polygon' WHERE id = $1`, [late.id]);
      await catalog.refresh();
      expect(inside(account.id, 19.65, -99.35)).toContain(late.id);
      expect(inside(account.id, 19.45, -99.15)).not.toContain(early.id); // not committed yet
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    await catalog.refresh();
    expect(inside(account.id, 19.45, -99.15)).toContain(early.id);
    expect(inside(account.id, 19.4, -99.1)).not.toContain(early.id);
  });
});

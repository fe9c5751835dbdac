import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../db/migrator.ts';
import { openEmptyDatabase } from '../db/empty-database.ts';

// Migration 0017: devices, trips and stops written before it get no address, to be looked up; down
// drops the columns and keeps every row.

const columns = async (db: Parameters<typeof migrateTo>[0], table: string) =>
  (await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns WHERE table_name = ${table} AND column_name LIKE '%address%' ORDER BY column_name`.execute(db)).rows.map((r) => r.column_name);

describe('migration 0017-addresses', () => {
  it('adds the address columns to rows already there, and goes down keeping every row', async () => {
    const empty = await openEmptyDatabase();
    try {
      await migrateTo(empty.db, '0016-webhook-fair-delivery');
      const { rows: [account] } = await sql<{ id: number }>`INSERT INTO accounts (name) VALUES ('Old') RETURNING id`.execute(empty.db);
      const { rows: [device] } = await sql<{ id: number }>`INSERT INTO devices (account_id, imei, name, mode) VALUES (${account!.id}, '356307042449901', 'Old Van', 'live') RETURNING id`.execute(empty.db);
      await sql`UPDATE device_states SET fix_time = now(), valid = true, latitude = 19.4, longitude = -99.1, address = 'Old text' WHERE device_id = ${device!.id}`.execute(empty.db);
      await sql`
        INSERT INTO trips (device_id, start_time, last_fix_time, start_lat, start_lng, end_lat, end_lng, distance_m, driving_s, idle_s, overspeed_s, max_speed_kmh, harsh_events)
        VALUES (${device!.id}, now() - interval '1 hour', now(), 19.4, -99.1, 19.5, -99.1, 1000, 100, 0, 0, 50, 0)`.execute(empty.db);
      await sql`INSERT INTO stops (device_id, start_time, last_fix_time, lat, lng, engine_idle_s) VALUES (${device!.id}, now(), now(), 19.5, -99.1, 0)`.execute(empty.db);

      await migrateToLatest(empty.db);
      expect(await columns(empty.db, 'device_states')).toEqual(['address', 'address_at', 'address_due_at', 'address_latitude', 'address_longitude']);
      expect(await columns(empty.db, 'trips')).toEqual(['address_due_at', 'end_address', 'start_address']);
      expect(await columns(empty.db, 'stops')).toEqual(['address', 'address_due_at']);
      // No point looked up: the keeper looks the device up, whatever text it had.
      const { rows: [state] } = await sql<{ address_latitude: number | null }>`SELECT address_latitude FROM device_states WHERE device_id = ${device!.id}`.execute(empty.db);
      expect(state!.address_latitude).toBeNull();
      const { rows: [trip] } = await sql<{ start_address: string | null; end_address: string | null }>`SELECT start_address, end_address FROM trips`.execute(empty.db);
      expect(trip).toEqual({ start_address: null, end_address: null });

      await migrateTo(empty.db, '0016-webhook-fair-delivery');
      expect(await columns(empty.db, 'device_states')).toEqual(['address']);
      expect(await columns(empty.db, 'trips')).toEqual([]);
      expect(await columns(empty.db, 'stops')).toEqual([]);
      const counts = await sql<{ trips: number; stops: number }>`SELECT (SELECT count(*) FROM trips)::int AS trips, (SELECT count(*) FROM stops)::int AS stops`.execute(empty.db);
      expect(counts.rows[0]).toEqual({ trips: 1, stops: 1 });
      await migrateToLatest(empty.db);
      expect(await columns(empty.db, 'stops')).toEqual(['address', 'address_due_at']);
    } finally {
      await empty.destroy();
    }
    // Built from an empty database (not the template), migration by migration: as the other migration tests allow.
  }, 180_000);
});

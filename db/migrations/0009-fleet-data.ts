import { sql, type Kysely } from 'kysely';

/**
 * Fleet data the engine works out as fixes arrive, and the drivers it assigns:
 * - `drivers` of an account (per mode, like vehicles), identified by the iButton / RFID / card number
 *   their trackers report; `driver_assignments` is the history of who drove which vehicle, from when
 *   to when (an open row is the current assignment: one per vehicle and one per driver);
 * - the identifier a vehicle last reported that matched no driver, so it can be registered later;
 * - `trips` and `stops`, segmented in fix-time order by the engine. A row in progress has a null
 *   `end_time`; (device, start_time) keys them, so a replayed evaluation writes the same rows;
 * - the segmenter's state per device (`device_engine_states.segment`), committed with the cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE drivers (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      identifier text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 64),
      phone text CHECK (length(phone) BETWEEN 1 AND 40),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, mode, identifier)
    )`.execute(db);
  await sql`CREATE INDEX drivers_name_idx ON drivers (account_id, mode, name, id)`.execute(db);

  await sql`
    CREATE TABLE driver_assignments (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      driver_id integer NOT NULL REFERENCES drivers (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      since timestamptz NOT NULL,
      until timestamptz CHECK (until >= since),
      source text NOT NULL CHECK (source IN ('telemetry', 'manual')),
      UNIQUE (device_id, since)
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX driver_assignments_open_device_idx ON driver_assignments (device_id) WHERE until IS NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX driver_assignments_open_driver_idx ON driver_assignments (driver_id) WHERE until IS NULL`.execute(db);
  await sql`CREATE INDEX driver_assignments_driver_idx ON driver_assignments (driver_id, since)`.execute(db);

  await sql`
    ALTER TABLE devices
      ADD COLUMN unknown_driver_identifier text,
      ADD COLUMN unknown_driver_seen_at timestamptz`.execute(db);

  await sql`
    CREATE TABLE trips (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      start_time timestamptz NOT NULL,
      -- Null while the trip is in progress.
      end_time timestamptz CHECK (end_time >= start_time),
      -- The newest fix counted in the trip (its end once it ended).
      last_fix_time timestamptz NOT NULL,
      start_lat double precision NOT NULL,
      start_lng double precision NOT NULL,
      end_lat double precision NOT NULL,
      end_lng double precision NOT NULL,
      start_geofence text,
      end_geofence text,
      distance_m double precision NOT NULL CHECK (distance_m >= 0),
      driving_s double precision NOT NULL CHECK (driving_s >= 0),
      idle_s double precision NOT NULL CHECK (idle_s >= 0),
      overspeed_s double precision NOT NULL CHECK (overspeed_s >= 0),
      max_speed_kmh double precision NOT NULL CHECK (max_speed_kmh >= 0),
      harsh_events integer NOT NULL CHECK (harsh_events >= 0),
      driver_id integer REFERENCES drivers (id) ON DELETE SET NULL,
      UNIQUE (device_id, start_time)
    )`.execute(db);
  await sql`CREATE INDEX trips_driver_idx ON trips (driver_id, start_time) WHERE driver_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE stops (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      start_time timestamptz NOT NULL,
      end_time timestamptz CHECK (end_time >= start_time),
      last_fix_time timestamptz NOT NULL,
      lat double precision NOT NULL,
      lng double precision NOT NULL,
      geofence text,
      engine_idle_s double precision NOT NULL CHECK (engine_idle_s >= 0),
      UNIQUE (device_id, start_time)
    )`.execute(db);

  await sql`ALTER TABLE device_engine_states ADD COLUMN segment jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS segment`.execute(db);
  await sql`DROP TABLE IF EXISTS stops`.execute(db);
  await sql`DROP TABLE IF EXISTS trips`.execute(db);
  await sql`ALTER TABLE devices DROP COLUMN IF EXISTS unknown_driver_identifier, DROP COLUMN IF EXISTS unknown_driver_seen_at`.execute(db);
  await sql`DROP TABLE IF EXISTS driver_assignments`.execute(db);
  await sql`DROP TABLE IF EXISTS drivers`.execute(db);
}

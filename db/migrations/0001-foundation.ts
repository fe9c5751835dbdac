import { sql, type Kysely } from 'kysely';

// Raw SQL: PostGIS types, generated columns and partial indexes read more clearly here than through a builder.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS postgis`.execute(db);

  await sql`
    CREATE TABLE accounts (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE users (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      email text NOT NULL UNIQUE CHECK (email = lower(email)),
      name text,
      timezone text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX users_account_idx ON users (account_id)`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text,
      prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      permissions text[] NOT NULL,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX api_keys_user_idx ON api_keys (user_id)`.execute(db);

  await sql`
    CREATE TABLE devices (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      imei text NOT NULL UNIQUE CHECK (imei ~ '^[0-9A-Za-z._-]{1,32}$'),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      plates text NOT NULL DEFAULT '',
      protocol text,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      created_at timestamptz NOT NULL DEFAULT now(),
      -- Travels find their vehicle by exact name, so a name is unique where a key can see it.
      UNIQUE (account_id, mode, name)
    )`.execute(db);

  await sql`
    CREATE TABLE user_devices (
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, device_id)
    )`.execute(db);
  await sql`CREATE INDEX user_devices_device_idx ON user_devices (device_id)`.execute(db);

  await sql`
    CREATE TABLE device_states (
      device_id integer PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      fix_time timestamptz NOT NULL,
      last_report_at timestamptz NOT NULL,
      valid boolean NOT NULL,
      latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
      longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
      altitude double precision,
      speed_kmh double precision,
      heading double precision,
      satellites integer,
      ignition boolean,
      motion boolean,
      odometer_km double precision,
      power_voltage double precision,
      backup_voltage double precision,
      signal_strength integer,
      connection_type text,
      address text,
      driver_id text,
      attributes jsonb NOT NULL DEFAULT '{}'
    )`.execute(db);

  // No spatial index on the history: it halves insert throughput, and history is read by device and time.
  await sql`
    CREATE TABLE positions (
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      fix_time timestamptz NOT NULL,
      server_time timestamptz NOT NULL DEFAULT now(),
      valid boolean NOT NULL,
      latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
      longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
      geom geometry(Point, 4326) GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)) STORED,
      altitude double precision,
      speed_kmh double precision,
      heading double precision,
      satellites integer,
      ignition boolean,
      attributes jsonb NOT NULL DEFAULT '{}',
      -- A retransmitted fix is the same row: inserting it again is a no-op.
      PRIMARY KEY (device_id, fix_time)
    )`.execute(db);

  await sql`
    CREATE TABLE geofences (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      kind text NOT NULL CHECK (kind IN ('polygon', 'circle')),
      geom geometry(Geometry, 4326) NOT NULL
        CHECK (GeometryType(geom) IN ('POLYGON', 'MULTIPOLYGON') AND ST_IsValid(geom)),
      center_lat double precision NOT NULL,
      center_lng double precision NOT NULL,
      radius_m double precision NOT NULL CHECK (radius_m >= 0),
      vertex_count integer NOT NULL,
      vertices jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, name)
    )`.execute(db);
  await sql`CREATE INDEX geofences_geom_idx ON geofences USING gist (geom)`.execute(db);

  await sql`
    CREATE TABLE geofence_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      geofence_id integer NOT NULL REFERENCES geofences (id) ON DELETE CASCADE,
      type text NOT NULL CHECK (type IN ('enter', 'exit')),
      fix_time timestamptz NOT NULL,
      latitude double precision NOT NULL,
      longitude double precision NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      -- Makes a replayed evaluation idempotent.
      UNIQUE (device_id, geofence_id, type, fix_time)
    )`.execute(db);
  await sql`CREATE INDEX geofence_events_device_time_idx ON geofence_events (device_id, fix_time)`.execute(db);

  await sql`
    CREATE TABLE geofence_visits (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      geofence_id integer NOT NULL REFERENCES geofences (id) ON DELETE CASCADE,
      entry_time timestamptz NOT NULL,
      exit_time timestamptz CHECK (exit_time >= entry_time),
      UNIQUE (device_id, geofence_id, entry_time)
    )`.execute(db);
  await sql`
    CREATE UNIQUE INDEX geofence_visits_one_open_idx ON geofence_visits (device_id, geofence_id)
      WHERE exit_time IS NULL`.execute(db);

  await sql`
    CREATE TABLE travels (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      created_by_user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      status smallint NOT NULL DEFAULT 0 CHECK (status IN (0, 1, 2, 3)),
      start_time timestamptz NOT NULL,
      start_latitude double precision,
      start_longitude double precision,
      started_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  // The one-active-travel rule, enforced by the database so concurrent requests cannot both win.
  await sql`CREATE UNIQUE INDEX travels_one_active_idx ON travels (device_id) WHERE status IN (0, 1)`.execute(db);
  await sql`CREATE INDEX travels_start_idx ON travels (start_time) WHERE status IN (0, 1)`.execute(db);

  await sql`
    CREATE TABLE travel_waypoints (
      travel_id integer NOT NULL REFERENCES travels (id) ON DELETE CASCADE,
      seq smallint NOT NULL CHECK (seq >= 1),
      geofence_id integer REFERENCES geofences (id) ON DELETE SET NULL,
      geofence_name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'cancelled')),
      expected_arrival timestamptz NOT NULL,
      arrived_at timestamptz,
      estimated_arrival timestamptz,
      estimated_at timestamptz,
      PRIMARY KEY (travel_id, seq)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'travel_waypoints', 'travels', 'geofence_visits', 'geofence_events', 'geofences', 'positions',
    'device_states', 'user_devices', 'devices', 'api_keys', 'users', 'accounts',
  ]) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(db);
  }
}

import { sql, type Kysely } from 'kysely';

/**
 * What the event producers remember between runs, so each event is decided once:
 * - speed limits per device and per account (the device's wins; neither: no overspeed events);
 * - per device, the last ignition the engine saw and whether it is in a speeding stretch, so a
 *   transition that spans two batches still counts once;
 * - per waypoint, when its live estimate first went past the on-time tolerance (`travel.delayed` is
 *   logged once per waypoint);
 * - per device, the tracker connection it was last seen on (`device.online`), so that a connection
 *   closing after a newer one took over (in another ingest process, or before a crash) logs no
 *   `device.offline` over the newer one's `device.online`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE accounts ADD COLUMN speed_limit_kmh real CHECK (speed_limit_kmh > 0)`.execute(db);
  await sql`ALTER TABLE devices ADD COLUMN speed_limit_kmh real CHECK (speed_limit_kmh > 0)`.execute(db);
  await sql`
    ALTER TABLE device_engine_states
      ADD COLUMN ignition boolean,
      ADD COLUMN overspeed boolean NOT NULL DEFAULT false`.execute(db);
  // Where the engine's cursor is the device's newest fix, that fix's ignition is the one it last saw:
  // an upgrade then logs no `ignition.on` for every vehicle already running.
  await sql`
    UPDATE device_engine_states e SET ignition = s.ignition
    FROM device_states s WHERE s.device_id = e.device_id AND s.fix_time = e.cursor_fix_time`.execute(db);
  await sql`ALTER TABLE travel_waypoints ADD COLUMN delayed_at timestamptz`.execute(db);
  await sql`
    CREATE TABLE device_connections (
      device_id integer PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      -- Made up by the ingest process for each connection; names its online and offline events.
      connection_id text NOT NULL,
      protocol text NOT NULL,
      remote_address text,
      connected_at timestamptz NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS device_connections`.execute(db);
  await sql`ALTER TABLE travel_waypoints DROP COLUMN IF EXISTS delayed_at`.execute(db);
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS ignition, DROP COLUMN IF EXISTS overspeed`.execute(db);
  await sql`ALTER TABLE devices DROP COLUMN IF EXISTS speed_limit_kmh`.execute(db);
  await sql`ALTER TABLE accounts DROP COLUMN IF EXISTS speed_limit_kmh`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * The server's own odometer and engine hours per vehicle (docs/engine.md, "Odometer and engine hours"):
 * - `device_engine_states.accumulators`, what the engine has counted in fix-time order (odometer in m,
 *   engine time in s, and the fix it counted up to), committed with the cursor like the trip
 *   segmenter's state, so a replay or a resend adds nothing. Null before the first step after this
 *   migration: counting starts then, from zero (history already evaluated is not re-read).
 * - `vehicle_baselines`, what an installer set through `PUT /vehicles/{id}/accumulators` (the vehicle's
 *   odometer and engine hours then) with the counts at that moment: the vehicle's figures are the
 *   baseline plus what was counted since.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE device_engine_states ADD COLUMN accumulators jsonb`.execute(db);
  await sql`
    CREATE TABLE vehicle_baselines (
      device_id integer PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      odometer_km double precision CHECK (odometer_km >= 0),
      odometer_from_m double precision NOT NULL DEFAULT 0,
      odometer_set_at timestamptz,
      engine_hours double precision CHECK (engine_hours >= 0),
      engine_from_s double precision NOT NULL DEFAULT 0,
      engine_set_at timestamptz
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS vehicle_baselines`.execute(db);
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS accumulators`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * Fuel refills and drops (docs/engine.md, "Fuel"):
 * - `device_engine_states.fuel`, the detector's memory between engine steps (the last readings it
 *   smooths over, the level a stop is measured from, a change not yet settled), committed with the
 *   cursor like the accumulators, so a replay logs nothing more. Null for a vehicle never seen with a
 *   fuel reading.
 * - `devices.fuel_tank_litres`, the vehicle's tank capacity (vehicles API `fuel_tank_litres`): it turns a
 *   tracker's litres into a level and a change's percentage into litres.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE device_engine_states ADD COLUMN fuel jsonb`.execute(db);
  await sql`
    ALTER TABLE devices ADD COLUMN fuel_tank_litres double precision
      CONSTRAINT devices_fuel_tank_litres_check CHECK (fuel_tank_litres > 0 AND fuel_tank_litres <= 10000)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE devices DROP COLUMN IF EXISTS fuel_tank_litres`.execute(db);
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS fuel`.execute(db);
}

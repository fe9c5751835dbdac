import { sql, type Kysely } from 'kysely';

/**
 * Reverse-geocoded addresses, looked up after the commit by the engine's address keeper
 * (engine/geocoding/address-keeper.ts), never on the ingest path:
 * - a device's state keeps the point its address was looked up for, so a vehicle that moved less
 *   than the reuse distance keeps its address without a lookup; `address_due_at` is a claim by one
 *   engine process (or, after a failed lookup, when to try again);
 * - trips keep the address of their start and of their end, stops of where they are, with the same
 *   claim, set once and never looked up again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE device_states
      ADD COLUMN address_latitude double precision,
      ADD COLUMN address_longitude double precision,
      ADD COLUMN address_at timestamptz,
      ADD COLUMN address_due_at timestamptz`.execute(db);
  await sql`
    ALTER TABLE trips
      ADD COLUMN start_address text,
      ADD COLUMN end_address text,
      ADD COLUMN address_due_at timestamptz`.execute(db);
  await sql`
    ALTER TABLE stops
      ADD COLUMN address text,
      ADD COLUMN address_due_at timestamptz`.execute(db);
  // The keeper looks only at recent trips and stops still missing an address: these stay small.
  await sql`CREATE INDEX trips_address_missing_idx ON trips (start_time) WHERE start_address IS NULL OR end_address IS NULL`.execute(db);
  await sql`CREATE INDEX stops_address_missing_idx ON stops (start_time) WHERE address IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS stops_address_missing_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS trips_address_missing_idx`.execute(db);
  await sql`ALTER TABLE stops DROP COLUMN IF EXISTS address, DROP COLUMN IF EXISTS address_due_at`.execute(db);
  await sql`ALTER TABLE trips DROP COLUMN IF EXISTS start_address, DROP COLUMN IF EXISTS end_address, DROP COLUMN IF EXISTS address_due_at`.execute(db);
  await sql`
    ALTER TABLE device_states
      DROP COLUMN IF EXISTS address_latitude, DROP COLUMN IF EXISTS address_longitude,
      DROP COLUMN IF EXISTS address_at, DROP COLUMN IF EXISTS address_due_at`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * Vehicle maintenance (docs/api/maintenance.md):
 * - `maintenance_items`, what a vehicle needs and how often: by odometer (km), engine hours or the
 *   calendar (days). `next_due` (km or hours) or `next_due_date` (calendar) is the next threshold;
 *   `due_logged` and `overdue_logged` name the threshold whose `vehicle.maintenance.due` and
 *   `.overdue` events were logged, so the engine's check logs each once.
 * - `maintenance_services`, the services recorded against an item, each with the threshold it set.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE maintenance_items (
      id serial PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      name text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('odometer', 'engineHours', 'calendar')),
      interval double precision NOT NULL CHECK (interval > 0),
      tolerance double precision NOT NULL CHECK (tolerance >= 0),
      next_due double precision,
      next_due_date date,
      due_logged text,
      overdue_logged text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((kind = 'calendar') = (next_due_date IS NOT NULL) AND (kind = 'calendar') = (next_due IS NULL))
    )
  `.execute(db);
  await sql`CREATE INDEX maintenance_items_device ON maintenance_items (device_id, id)`.execute(db);
  await sql`
    CREATE TABLE maintenance_services (
      id serial PRIMARY KEY,
      item_id integer NOT NULL REFERENCES maintenance_items (id) ON DELETE CASCADE,
      performed_on date NOT NULL,
      odometer_km double precision,
      engine_hours double precision,
      note text,
      cost double precision,
      next_due double precision,
      next_due_date date,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`CREATE INDEX maintenance_services_item ON maintenance_services (item_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS maintenance_services`.execute(db);
  await sql`DROP TABLE IF EXISTS maintenance_items`.execute(db);
}

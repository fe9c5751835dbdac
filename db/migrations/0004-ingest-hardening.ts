import { sql, type Kysely } from 'kysely';

/**
 * What ingest keeps so that nothing it accepted is lost or silent:
 * - every device has a latest-state row from its registration, fix or not, so a heartbeat from a
 *   device that never had a fix still counts as a report, and a batch's state upsert always meets a
 *   row to lock;
 * - telemetry without a fix (alarms, battery, power cut, signal, command answers) as rows of its own;
 * - fixes that arrived after a newer fix of their device had been stored, for the engine to look at;
 * - records the database refused even after range checks, with the error, so the tracker can be
 *   acknowledged and move on, and an operator can look at them and replay them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE device_states
      ALTER COLUMN fix_time DROP NOT NULL,
      ALTER COLUMN last_report_at DROP NOT NULL,
      ALTER COLUMN valid DROP NOT NULL,
      ALTER COLUMN latitude DROP NOT NULL,
      ALTER COLUMN longitude DROP NOT NULL,
      -- The fix time the state had before the batch that last moved it: the batch's upsert writes it and
      -- reads it back in the same statement to tell which of its fixes are late (see db/late-fixes.ts).
      ADD COLUMN previous_fix_time timestamptz`.execute(db);
  await sql`
    INSERT INTO device_states (device_id)
    SELECT d.id FROM devices d WHERE NOT EXISTS (SELECT 1 FROM device_states s WHERE s.device_id = d.id)`.execute(db);
  await sql`
    CREATE FUNCTION fleetcore_device_registered() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO device_states (device_id) VALUES (NEW.id) ON CONFLICT (device_id) DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  // A trigger, so a device registered by any path (API, CLI, SQL by hand) has its row.
  await sql`
    CREATE TRIGGER devices_registered AFTER INSERT ON devices
      FOR EACH ROW EXECUTE FUNCTION fleetcore_device_registered()`.execute(db);

  await sql`
    CREATE TABLE device_reports (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      -- The device's own time when it sent one, else when the server received it.
      report_time timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      attributes jsonb NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX device_reports_device_time_idx ON device_reports (device_id, report_time)`.execute(db);

  await sql`
    CREATE TABLE late_fixes (
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      fix_time timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (device_id, fix_time)
    )`.execute(db);

  await sql`
    CREATE TABLE ingest_dead_letters (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      device_id integer REFERENCES devices (id) ON DELETE CASCADE,
      protocol text,
      -- The record as ingest decoded it, and the frame it came in when there was one.
      record jsonb NOT NULL,
      frame bytea,
      error text NOT NULL,
      sqlstate text,
      created_at timestamptz NOT NULL DEFAULT now(),
      replayed_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX ingest_dead_letters_waiting_idx ON ingest_dead_letters (id) WHERE replayed_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS ingest_dead_letters`.execute(db);
  await sql`DROP TABLE IF EXISTS late_fixes`.execute(db);
  await sql`DROP TABLE IF EXISTS device_reports`.execute(db);
  await sql`DROP TRIGGER IF EXISTS devices_registered ON devices`.execute(db);
  await sql`DROP FUNCTION IF EXISTS fleetcore_device_registered()`.execute(db);
  await sql`DELETE FROM device_states WHERE fix_time IS NULL`.execute(db);
  await sql`
    ALTER TABLE device_states
      DROP COLUMN previous_fix_time,
      ALTER COLUMN fix_time SET NOT NULL,
      ALTER COLUMN last_report_at SET NOT NULL,
      ALTER COLUMN valid SET NOT NULL,
      ALTER COLUMN latitude SET NOT NULL,
      ALTER COLUMN longitude SET NOT NULL`.execute(db);
}

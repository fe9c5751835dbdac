import { sql, type Kysely } from 'kysely';

/**
 * What the engine keeps: per device, how far it has evaluated and which geofences it is inside; per
 * geofence, optional debounce; a change log the engine processes follow to keep their indexes
 * current; and the outbox through which committed events leave.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE device_engine_states (
      device_id integer PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
      -- The newest fix evaluated; later fixes are read after it, older arrivals are stored but not evaluated.
      cursor_fix_time timestamptz,
      inside integer[] NOT NULL DEFAULT '{}',
      -- Crossings waiting out their geofence's dwell time (debounce).
      pending jsonb NOT NULL DEFAULT '[]',
      status text CHECK (status IN ('Moving', 'Stopped', 'Off', 'Inactive')),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    ALTER TABLE geofences
      ADD COLUMN enter_dwell_s integer NOT NULL DEFAULT 0 CHECK (enter_dwell_s BETWEEN 0 AND 86400),
      ADD COLUMN exit_dwell_s integer NOT NULL DEFAULT 0 CHECK (exit_dwell_s BETWEEN 0 AND 86400)`.execute(db);

  await sql`
    CREATE TABLE geofence_changes (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      geofence_id integer NOT NULL,
      account_id integer NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  // A trigger, so a change made by any path (API, CLI, SQL by hand) reaches every engine process.
  await sql`
    CREATE FUNCTION fleetcore_geofence_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      changed record;
    BEGIN
      IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
      INSERT INTO geofence_changes (geofence_id, account_id) VALUES (changed.id, changed.account_id);
      PERFORM pg_notify('fleetcore_geofence_changes', changed.id::text);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER geofences_changed AFTER INSERT OR UPDATE OR DELETE ON geofences
      FOR EACH ROW EXECUTE FUNCTION fleetcore_geofence_changed()`.execute(db);

  await sql`
    CREATE TABLE engine_outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX engine_outbox_unpublished_idx ON engine_outbox (id) WHERE published_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS engine_outbox`.execute(db);
  await sql`DROP TRIGGER IF EXISTS geofences_changed ON geofences`.execute(db);
  await sql`DROP FUNCTION IF EXISTS fleetcore_geofence_changed()`.execute(db);
  await sql`DROP TABLE IF EXISTS geofence_changes`.execute(db);
  await sql`ALTER TABLE geofences DROP COLUMN IF EXISTS enter_dwell_s, DROP COLUMN IF EXISTS exit_dwell_s`.execute(db);
  await sql`DROP TABLE IF EXISTS device_engine_states`.execute(db);
}

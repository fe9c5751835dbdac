import { sql, type Kysely } from 'kysely';

/**
 * What the engine needs to miss no change and lose nothing in silence:
 * - each geofence change carries the id of the transaction that made it, so an engine process can
 *   tell which changes may still become visible (see db/geofence-changes.ts);
 * - per device, counts of the late fixes it met (evaluated within the window, or too old);
 * - outbox records are claimed for a while by the dispatcher publishing them, so publishing needs no
 *   open transaction;
 * - indexes for pruning published outbox records and old geofence changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE geofence_changes ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id()`.execute(db);
  await sql`CREATE INDEX geofence_changes_xid_idx ON geofence_changes (xid)`.execute(db);
  await sql`CREATE INDEX geofence_changes_changed_idx ON geofence_changes (changed_at)`.execute(db);

  await sql`
    ALTER TABLE device_engine_states
      ADD COLUMN late_fixes bigint NOT NULL DEFAULT 0,
      ADD COLUMN late_fixes_ignored bigint NOT NULL DEFAULT 0`.execute(db);

  await sql`ALTER TABLE engine_outbox ADD COLUMN claimed_until timestamptz`.execute(db);
  await sql`CREATE INDEX engine_outbox_published_idx ON engine_outbox (published_at) WHERE published_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS engine_outbox_published_idx`.execute(db);
  await sql`ALTER TABLE engine_outbox DROP COLUMN IF EXISTS claimed_until`.execute(db);
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS late_fixes, DROP COLUMN IF EXISTS late_fixes_ignored`.execute(db);
  await sql`DROP INDEX IF EXISTS geofence_changes_changed_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS geofence_changes_xid_idx`.execute(db);
  await sql`ALTER TABLE geofence_changes DROP COLUMN IF EXISTS xid`.execute(db);
}

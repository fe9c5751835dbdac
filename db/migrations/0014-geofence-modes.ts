import { sql, type Kysely } from 'kysely';

/**
 * Geofences get a mode, like vehicles, drivers and webhooks: test and live keys are separate for every
 * resource, and a test key no longer sees, renames or deletes the live geofences. The geofences written
 * before are the ones live keys meant, so they become live (the default also covers a row an operator
 * inserts by hand). Names are unique per account and mode: the test copy of a depot may keep its name.
 *
 * The engine's change log needs nothing new: it reloads a changed geofence by id and reads its mode then.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE geofences ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'))`.execute(db);
  await sql`ALTER TABLE geofences DROP CONSTRAINT geofences_account_id_name_key`.execute(db);
  // Also the index of every lookup by account and mode (lists, names of travels, ids of reports).
  await sql`ALTER TABLE geofences ADD CONSTRAINT geofences_account_mode_name_key UNIQUE (account_id, mode, name)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Names become unique per account again: a test geofence sharing a live one's name is renamed, not dropped.
  await sql`
    UPDATE geofences t SET name = left(t.name, 180) || ' (test ' || t.id || ')'
    WHERE t.mode = 'test' AND EXISTS (SELECT 1 FROM geofences l WHERE l.account_id = t.account_id AND l.name = t.name AND l.mode = 'live')`.execute(db);
  await sql`ALTER TABLE geofences DROP CONSTRAINT IF EXISTS geofences_account_mode_name_key`.execute(db);
  await sql`ALTER TABLE geofences ADD CONSTRAINT geofences_account_id_name_key UNIQUE (account_id, name)`.execute(db);
  await sql`ALTER TABLE geofences DROP COLUMN IF EXISTS mode`.execute(db);
}

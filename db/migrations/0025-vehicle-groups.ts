import { sql, type Kysely } from 'kysely';

/**
 * Vehicle groups (docs/api/groups.md, docs/decisions/0023-vehicle-groups.md):
 * - `vehicle_groups`: named per account and mode, as vehicles are (the name unique within them), so a
 *   test key and a live key never see each other's groups;
 * - `vehicle_group_devices`: which vehicles a group holds;
 * - `user_vehicle_groups`: which users are granted a group.
 * The direct grants move to `user_device_grants`, and `user_devices` becomes a view of what a user
 * sees: their direct grants united with their groups' vehicles. Every read that joined the table joins
 * the view unchanged; writes go to `user_device_grants`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE user_devices RENAME TO user_device_grants`.execute(db);
  await sql`ALTER INDEX user_devices_pkey RENAME TO user_device_grants_pkey`.execute(db);
  await sql`ALTER INDEX user_devices_device_idx RENAME TO user_device_grants_device_idx`.execute(db);
  await sql`
    CREATE TABLE vehicle_groups (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, mode, name)
    )`.execute(db);
  await sql`
    CREATE TABLE vehicle_group_devices (
      group_id integer NOT NULL REFERENCES vehicle_groups (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      PRIMARY KEY (group_id, device_id)
    )`.execute(db);
  await sql`CREATE INDEX vehicle_group_devices_device_idx ON vehicle_group_devices (device_id, group_id)`.execute(db);
  await sql`
    CREATE TABLE user_vehicle_groups (
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      group_id integer NOT NULL REFERENCES vehicle_groups (id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, group_id)
    )`.execute(db);
  await sql`CREATE INDEX user_vehicle_groups_group_idx ON user_vehicle_groups (group_id, user_id)`.execute(db);
  // UNION, not UNION ALL: a vehicle granted directly and through a group (or two groups) is one row,
  // so joins on the view never answer a vehicle twice. Each branch is an index lookup once a user or
  // a device is given, and the planner pushes those conditions into both.
  await sql`
    CREATE VIEW user_devices AS
      SELECT user_id, device_id FROM user_device_grants
      UNION
      SELECT ug.user_id, gd.device_id
        FROM user_vehicle_groups ug
        JOIN vehicle_group_devices gd ON gd.group_id = ug.group_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW IF EXISTS user_devices`.execute(db);
  await sql`DROP TABLE IF EXISTS user_vehicle_groups`.execute(db);
  await sql`DROP TABLE IF EXISTS vehicle_group_devices`.execute(db);
  await sql`DROP TABLE IF EXISTS vehicle_groups`.execute(db);
  await sql`ALTER INDEX user_device_grants_device_idx RENAME TO user_devices_device_idx`.execute(db);
  await sql`ALTER INDEX user_device_grants_pkey RENAME TO user_devices_pkey`.execute(db);
  await sql`ALTER TABLE user_device_grants RENAME TO user_devices`.execute(db);
}

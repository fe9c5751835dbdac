import { sql, type Kysely } from 'kysely';

/**
 * What delivering commands needs beyond the record of 0010: how many times a command may be sent
 * before it fails (a client that must not have a command repeated asks for 1), and the address the
 * request came from, for the audit trail beside the key and user.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE commands ADD COLUMN max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts BETWEEN 1 AND 10)`.execute(db);
  await sql`ALTER TABLE commands ADD COLUMN requested_from text`.execute(db);
  // The list endpoint filters one device's commands newest first.
  await sql`CREATE INDEX commands_device_idx ON commands (device_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS commands_device_idx`.execute(db);
  await sql`ALTER TABLE commands DROP COLUMN IF EXISTS requested_from`.execute(db);
  await sql`ALTER TABLE commands DROP COLUMN IF EXISTS max_attempts`.execute(db);
}

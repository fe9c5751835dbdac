import { sql, type Kysely } from 'kysely';

/**
 * Users' roles within their account (domain/access/roles.ts):
 * - `users.role`, one of owner, admin, dispatcher, viewer. Users made before roles existed become
 *   owners: they held every power through the operator's shell, and each account keeps at least one
 *   owner (checked where roles change and users are removed, under a lock of the account's row).
 *   A user inserted without a role is an owner too, as before; the API and the CLI name the role.
 * - `users.removed_at`: a removed user is kept (the audit log and the travels they created still
 *   name them) but no longer listed, found or signed in as; their email is free again, so the
 *   uniqueness of emails holds among the users not removed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'owner'
      CHECK (role IN ('owner', 'admin', 'dispatcher', 'viewer'))
  `.execute(db);
  await sql`ALTER TABLE users ADD COLUMN removed_at timestamptz`.execute(db);
  await sql`ALTER TABLE users DROP CONSTRAINT users_email_key`.execute(db);
  await sql`CREATE UNIQUE INDEX users_email_idx ON users (email) WHERE removed_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS users_email_idx`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT users_email_key UNIQUE (email)`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN IF EXISTS removed_at`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN IF EXISTS role`.execute(db);
}

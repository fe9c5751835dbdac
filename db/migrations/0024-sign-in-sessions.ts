import { sql, type Kysely } from 'kysely';

/**
 * Signing in with an email and a password (docs/api/sessions.md):
 * - `users.password_hash`: the password's argon2id hash (PHC string); null while the user has none.
 * - `user_sessions`: one row per signed-in browser. Only the SHA-256 of the session token is stored,
 *   so a copy of the table signs no one in. A session ends at `expires_at` (absolute), at
 *   `idle_expires_at` (pushed forward as it is used), or when `revoked_at` is set.
 * - `sign_in_tokens`: one-time links that let a user set a password (made by `fleet user create` and
 *   `fleet user reset-password`); hashed, expiring, and used up by the statement that reads them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN password_hash text`.execute(db);
  await sql`ALTER TABLE users ADD COLUMN password_changed_at timestamptz`.execute(db);
  await sql`
    CREATE TABLE user_sessions (
      id uuid PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      idle_expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      user_agent text,
      address text
    )
  `.execute(db);
  await sql`CREATE INDEX user_sessions_user_idx ON user_sessions (user_id)`.execute(db);
  await sql`
    CREATE TABLE sign_in_tokens (
      token_hash text PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )
  `.execute(db);
  await sql`CREATE INDEX sign_in_tokens_user_idx ON sign_in_tokens (user_id)`.execute(db);
  // What a signed-in user does through the API is audited as done by their session.
  await sql`ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_kind_check`.execute(db);
  await sql`ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check CHECK (actor_kind IN ('api_key', 'oauth_client', 'cli', 'session'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM audit_log WHERE actor_kind = 'session'`.execute(db);
  await sql`ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_actor_kind_check`.execute(db);
  await sql`ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check CHECK (actor_kind IN ('api_key', 'oauth_client', 'cli'))`.execute(db);
  await sql`DROP TABLE IF EXISTS sign_in_tokens`.execute(db);
  await sql`DROP TABLE IF EXISTS user_sessions`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN IF EXISTS password_changed_at`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN IF EXISTS password_hash`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * Access for integrations: OAuth 2.0 clients (client credentials) and the access tokens they are
 * issued, both stored only as hashes; stream tokens and commands that an OAuth client, not an API key,
 * stands behind; and the audit log of who changed access, webhooks and commands, from where.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Keys are found by their clear prefix, then compared by hash in constant time.
  await sql`CREATE INDEX api_keys_prefix_idx ON api_keys (prefix)`.execute(db);

  await sql`
    CREATE TABLE oauth_clients (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      client_id text NOT NULL UNIQUE,
      secret_hash text NOT NULL,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      name text,
      scopes text[] NOT NULL,
      -- A client made through the API lives no longer than the key that made it.
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX oauth_clients_user_idx ON oauth_clients (user_id)`.execute(db);

  await sql`
    CREATE TABLE oauth_tokens (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      client_id integer NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
      scopes text[] NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX oauth_tokens_expires_idx ON oauth_tokens (expires_at)`.execute(db);
  await sql`CREATE INDEX oauth_tokens_client_idx ON oauth_tokens (client_id)`.execute(db);

  await sql`ALTER TABLE stream_tokens ALTER COLUMN api_key_id DROP NOT NULL`.execute(db);
  await sql`ALTER TABLE stream_tokens ADD COLUMN oauth_token_id bigint REFERENCES oauth_tokens (id) ON DELETE CASCADE`.execute(db);
  await sql`ALTER TABLE stream_tokens ADD CONSTRAINT stream_tokens_one_credential CHECK ((api_key_id IS NULL) <> (oauth_token_id IS NULL))`.execute(db);

  await sql`ALTER TABLE commands ADD COLUMN oauth_client_id integer REFERENCES oauth_clients (id) ON DELETE SET NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX commands_oauth_idempotency_idx ON commands (oauth_client_id, idempotency_key)`.execute(db);

  await sql`
    CREATE TABLE audit_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      actor_kind text NOT NULL CHECK (actor_kind IN ('api_key', 'oauth_client', 'cli')),
      api_key_id integer REFERENCES api_keys (id) ON DELETE SET NULL,
      oauth_client_id integer REFERENCES oauth_clients (id) ON DELETE SET NULL,
      user_id integer REFERENCES users (id) ON DELETE SET NULL,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text NOT NULL,
      details jsonb NOT NULL DEFAULT '{}',
      remote_address text,
      occurred_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX audit_log_account_idx ON audit_log (account_id, mode, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS audit_log`.execute(db);
  await sql`DROP INDEX IF EXISTS commands_oauth_idempotency_idx`.execute(db);
  await sql`ALTER TABLE commands DROP COLUMN IF EXISTS oauth_client_id`.execute(db);
  await sql`DELETE FROM stream_tokens WHERE api_key_id IS NULL`.execute(db);
  await sql`ALTER TABLE stream_tokens DROP CONSTRAINT IF EXISTS stream_tokens_one_credential`.execute(db);
  await sql`ALTER TABLE stream_tokens DROP COLUMN IF EXISTS oauth_token_id`.execute(db);
  await sql`ALTER TABLE stream_tokens ALTER COLUMN api_key_id SET NOT NULL`.execute(db);
  await sql`DROP TABLE IF EXISTS oauth_tokens`.execute(db);
  await sql`DROP TABLE IF EXISTS oauth_clients`.execute(db);
  await sql`DROP INDEX IF EXISTS api_keys_prefix_idx`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * Remote commands: a row first, then bytes on the device's connection. The row is the state machine
 * (queued → sent → acknowledged | failed | expired | cancelled) and the audit trail (the key and user
 * that issued it), so nothing queued is lost when a process dies, and a repeated request with the
 * same idempotency key finds the first command.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE commands (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      api_key_id integer REFERENCES api_keys (id) ON DELETE SET NULL,
      user_id integer REFERENCES users (id) ON DELETE SET NULL,
      type text NOT NULL CHECK (type IN ('engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo', 'custom')),
      params jsonb NOT NULL DEFAULT '{}',
      text text,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'acknowledged', 'failed', 'expired', 'cancelled')),
      -- Why a queued command waits (the safety rule), or why it failed.
      status_reason text,
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      idempotency_key text CHECK (length(idempotency_key) BETWEEN 1 AND 200),
      response text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      acknowledged_at timestamptz,
      finished_at timestamptz,
      expires_at timestamptz NOT NULL,
      UNIQUE (api_key_id, idempotency_key)
    )`.execute(db);
  await sql`CREATE INDEX commands_device_open_idx ON commands (device_id, id) WHERE status IN ('queued', 'sent')`.execute(db);
  await sql`CREATE INDEX commands_account_idx ON commands (account_id, id)`.execute(db);
  await sql`CREATE INDEX commands_expiry_idx ON commands (expires_at) WHERE status IN ('queued', 'sent')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS commands`.execute(db);
}

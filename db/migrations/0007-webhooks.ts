import { sql, type Kysely } from 'kysely';

/**
 * Webhooks and their deliveries. A webhook belongs to the user and mode of the key that registered it
 * and receives only events that key could read. Fan-out follows the event log by id (one cursor row)
 * and turns each matching event into one delivery per webhook; a delivery is retried on its own
 * schedule, so a dead receiver holds up only its own rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      url text NOT NULL,
      -- Event kinds and families (ending in *) as the user gave them.
      events text[] NOT NULL,
      description text,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      disabled_at timestamptz,
      -- whsec_<base64>; the previous secret keeps signing until previous_secret_expires_at (rotation).
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      -- Events in a row that ended failed; reset by a success.
      consecutive_failures integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX webhooks_account_idx ON webhooks (account_id) WHERE enabled`.execute(db);

  await sql`
    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      webhook_id integer NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      -- The logged event; null for a test ping, whose payload is kept here instead.
      event_id bigint,
      event_type text NOT NULL,
      payload jsonb,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      -- A worker is sending it until then; past it, another may.
      claimed_until timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      last_duration_ms integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (webhook_id, event_id)
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id)`.execute(db);

  await sql`
    CREATE TABLE webhook_delivery_attempts (
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      status_code integer,
      error text,
      duration_ms integer NOT NULL,
      PRIMARY KEY (delivery_id, attempt)
    )`.execute(db);

  // How far fan-out has read the log. Starts at the log's end: events from before webhooks existed
  // are not delivered to anyone.
  await sql`
    CREATE TABLE event_fanout_cursor (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      last_event_id bigint NOT NULL
    )`.execute(db);
  await sql`INSERT INTO event_fanout_cursor (last_event_id) SELECT coalesce(max(id), 0) FROM events`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS event_fanout_cursor`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_delivery_attempts`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_deliveries`.execute(db);
  await sql`DROP TABLE IF EXISTS webhooks`.execute(db);
}

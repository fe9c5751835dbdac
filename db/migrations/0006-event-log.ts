import { sql, type Kysely } from 'kysely';

/**
 * The event log: every event the system decides, one row each, append-only. It replaces the engine
 * outbox: webhooks and the live stream follow the log by id instead of draining a queue table.
 *
 * Ids are handed out in commit order (writers serialise on an advisory lock held to their commit, see
 * db/event-log.ts), so a reader that has seen id N has seen, or will never see, every id below N: "after
 * id N" is a complete resume point for pages, streams and webhook fan-out alike.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL,
      -- No foreign key: the log outlives a deleted vehicle; the payload keeps its names as they were.
      device_id integer,
      -- Who may see an event without a device: null for every user (or both modes) of the account.
      user_id integer,
      mode text CHECK (mode IN ('live', 'test')),
      type text NOT NULL,
      occurred_at timestamptz NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      data jsonb NOT NULL,
      -- Names the decision that made the event, so a producer run twice adds nothing.
      dedupe_key text UNIQUE
    )`.execute(db);
  await sql`CREATE INDEX events_account_idx ON events (account_id, id)`.execute(db);
  await sql`CREATE INDEX events_device_idx ON events (device_id, id) WHERE device_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX events_account_time_idx ON events (account_id, occurred_at)`.execute(db);

  // Short-lived tokens a browser's EventSource passes in the URL, since it cannot send headers.
  await sql`
    CREATE TABLE stream_tokens (
      token_hash text PRIMARY KEY,
      api_key_id integer NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX stream_tokens_expires_idx ON stream_tokens (expires_at)`.execute(db);

  await sql`DROP TABLE engine_outbox`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE engine_outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      claimed_until timestamptz
    )`.execute(db);
  await sql`CREATE INDEX engine_outbox_unpublished_idx ON engine_outbox (id) WHERE published_at IS NULL`.execute(db);
  await sql`CREATE INDEX engine_outbox_published_idx ON engine_outbox (published_at) WHERE published_at IS NOT NULL`.execute(db);
  await sql`DROP TABLE IF EXISTS stream_tokens`.execute(db);
  await sql`DROP TABLE IF EXISTS events`.execute(db);
}

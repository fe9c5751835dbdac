import { sql, type Kysely } from 'kysely';

/**
 * Notifications for people (docs/notifications.md):
 * - `notification_rules`: which events of an account and mode, for which vehicles and geofences, when
 *   (an optional weekly schedule in the rule's timezone), how often per vehicle, and to whom on which
 *   channels (`recipients`: `[{userId, channels}]`);
 * - `notification_channels`: each user's own addresses (email, Telegram chat, phone) and mute;
 * - `push_subscriptions`: the browsers a user subscribed for web push (endpoint and keys);
 * - `report_subscriptions`: a user's daily or weekly summary by email, with its next run;
 * - `notification_deliveries`: one row per message to send (an event for a recipient on a channel and,
 *   for web push, a browser; or one run of a scheduled report), with its attempts and outcome. Unique
 *   per event, recipient, channel and browser, and per report and period: nothing is sent twice;
 * - `notification_rule_vehicles`: when each rule last notified about each vehicle (its minimum interval);
 * - `notification_fanout_cursor`: the last event turned into deliveries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE notification_rules (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      created_by integer REFERENCES users (id) ON DELETE SET NULL,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      events text[] NOT NULL,
      vehicle_scope text NOT NULL CHECK (vehicle_scope IN ('all', 'groups', 'list')),
      group_ids integer[] NOT NULL DEFAULT '{}',
      device_ids integer[] NOT NULL DEFAULT '{}',
      geofence_ids integer[],
      schedule jsonb,
      timezone text NOT NULL,
      min_interval_s integer NOT NULL DEFAULT 0 CHECK (min_interval_s >= 0),
      recipients jsonb NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX notification_rules_account_idx ON notification_rules (account_id, mode, id)`.execute(db);

  await sql`
    CREATE TABLE notification_channels (
      user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      email text,
      telegram_chat_id text,
      phone text,
      muted boolean NOT NULL DEFAULT false,
      muted_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE push_subscriptions (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      endpoint text NOT NULL UNIQUE,
      p256dh text NOT NULL,
      auth text NOT NULL,
      user_agent text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX push_subscriptions_user_idx ON push_subscriptions (user_id)`.execute(db);

  await sql`
    CREATE TABLE report_subscriptions (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly')),
      reports text[] NOT NULL,
      local_time text NOT NULL,
      weekday integer CHECK (weekday BETWEEN 1 AND 7),
      timezone text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      next_run_at timestamptz NOT NULL,
      last_run_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX report_subscriptions_due_idx ON report_subscriptions (next_run_at) WHERE enabled`.execute(db);
  await sql`CREATE INDEX report_subscriptions_user_idx ON report_subscriptions (user_id, id)`.execute(db);

  await sql`
    CREATE TABLE notification_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      rule_id integer REFERENCES notification_rules (id) ON DELETE CASCADE,
      report_subscription_id integer REFERENCES report_subscriptions (id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('email', 'push', 'telegram', 'sms')),
      push_subscription_id integer,
      event_id bigint,
      event_type text,
      period_start timestamptz,
      period_end timestamptz,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz,
      last_attempt_at timestamptz,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((rule_id IS NOT NULL AND event_id IS NOT NULL) OR (report_subscription_id IS NOT NULL AND period_start IS NOT NULL))
    )`.execute(db);
  await sql`
    CREATE UNIQUE INDEX notification_deliveries_event_once ON notification_deliveries (event_id, user_id, channel, coalesce(push_subscription_id, 0))
    WHERE event_id IS NOT NULL`.execute(db);
  await sql`
    CREATE UNIQUE INDEX notification_deliveries_report_once ON notification_deliveries (report_subscription_id, period_start)
    WHERE report_subscription_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX notification_deliveries_due_idx ON notification_deliveries (channel, next_attempt_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX notification_deliveries_rule_idx ON notification_deliveries (rule_id, id)`.execute(db);
  await sql`CREATE INDEX notification_deliveries_created_idx ON notification_deliveries (created_at)`.execute(db);

  await sql`
    CREATE TABLE notification_rule_vehicles (
      rule_id integer NOT NULL REFERENCES notification_rules (id) ON DELETE CASCADE,
      device_id integer NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      last_notified_at timestamptz NOT NULL,
      PRIMARY KEY (rule_id, device_id)
    )`.execute(db);

  await sql`CREATE TABLE notification_fanout_cursor (last_event_id bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO notification_fanout_cursor (last_event_id) SELECT coalesce(max(id), 0) FROM events`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['notification_fanout_cursor', 'notification_rule_vehicles', 'notification_deliveries', 'report_subscriptions', 'push_subscriptions', 'notification_channels', 'notification_rules']) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(db);
  }
}

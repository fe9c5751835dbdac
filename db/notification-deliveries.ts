import { sql } from 'kysely';
import type { NotificationChannel } from '../domain/notifications/notification-rule.ts';
import type { Db } from './database.ts';

/** A delivery claimed for sending, with what its message and address are made of. */
export interface ClaimedNotification {
  id: string;
  accountId: number;
  channel: NotificationChannel;
  attempts: number;
  userId: number;
  /** The recipient now: their timezone, addresses and mute (read at send time, so a change holds at once). */
  timezone: string;
  email: string | null;
  telegramChatId: string | null;
  phone: string | null;
  muted: boolean;
  removed: boolean;
  push: { endpoint: string; p256dh: string; auth: string } | null;
  pushSubscriptionId: number | null;
  /** An event's delivery: the event as logged (null when it was pruned before it could be sent). */
  event: { id: string; type: string; occurredAt: Date; recordedAt: Date; data: Record<string, unknown> } | null;
  eventId: string | null;
  /** A scheduled report's delivery. */
  report: { subscriptionId: number; periodStart: Date; periodEnd: Date } | null;
  createdAt: Date;
}

interface ClaimRow {
  id: string; account_id: number; channel: NotificationChannel; attempts: number; user_id: number; timezone: string;
  email: string | null; telegram_chat_id: string | null; phone: string | null; muted: boolean; removed: boolean;
  push_subscription_id: number | null; endpoint: string | null; p256dh: string | null; auth: string | null;
  event_id: string | null; type: string | null; occurred_at: Date | null; recorded_at: Date | null; data: Record<string, unknown> | null;
  report_subscription_id: number | null; period_start: Date | null; period_end: Date | null; created_at: Date;
}

/**
 * Claims up to `limit` due deliveries of one channel for `claimMs`, oldest due first, skipping rows
 * another process is claiming at the same moment; a claimed row is not taken again until its claim
 * runs out (a process that died mid-send), so a delivery is sent by one process at a time.
 */
export async function claimDueNotifications(db: Db, channel: NotificationChannel, limit: number, claimMs: number): Promise<ClaimedNotification[]> {
  if (limit <= 0) return [];
  const { rows } = await sql<ClaimRow>`
    WITH picked AS (
      SELECT id FROM notification_deliveries
      WHERE status = 'pending' AND channel = ${channel} AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
      ORDER BY next_attempt_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE notification_deliveries d SET claimed_until = now() + ${claimMs}::float8 * interval '1 millisecond'
      FROM picked WHERE d.id = picked.id
      RETURNING d.*
    )
    SELECT c.id::text AS id, c.account_id, c.channel, c.attempts, c.user_id, u.timezone,
      coalesce(nc.email, u.email) AS email, nc.telegram_chat_id, nc.phone,
      coalesce(nc.muted_until > now() OR (nc.muted AND nc.muted_until IS NULL), false) AS muted, u.removed_at IS NOT NULL AS removed,
      c.push_subscription_id, ps.endpoint, ps.p256dh, ps.auth,
      c.event_id::text AS event_id, e.type, e.occurred_at, e.recorded_at, e.data,
      c.report_subscription_id, c.period_start, c.period_end, c.created_at
    FROM claimed c
    JOIN users u ON u.id = c.user_id
    LEFT JOIN notification_channels nc ON nc.user_id = c.user_id
    LEFT JOIN push_subscriptions ps ON ps.id = c.push_subscription_id AND ps.user_id = c.user_id
    LEFT JOIN events e ON e.id = c.event_id
    ORDER BY c.next_attempt_at, c.id
  `.execute(db);
  return rows.map((r) => ({
    id: r.id, accountId: r.account_id, channel: r.channel, attempts: r.attempts, userId: r.user_id, timezone: r.timezone,
    email: r.email, telegramChatId: r.telegram_chat_id, phone: r.phone, muted: r.muted, removed: r.removed,
    push: r.endpoint && r.p256dh && r.auth ? { endpoint: r.endpoint, p256dh: r.p256dh, auth: r.auth } : null,
    pushSubscriptionId: r.push_subscription_id,
    event: r.event_id && r.type && r.occurred_at && r.recorded_at && r.data ? { id: r.event_id, type: r.type, occurredAt: r.occurred_at, recordedAt: r.recorded_at, data: r.data } : null,
    eventId: r.event_id,
    report: r.report_subscription_id && r.period_start && r.period_end ? { subscriptionId: r.report_subscription_id, periodStart: r.period_start, periodEnd: r.period_end } : null,
    createdAt: r.created_at,
  }));
}

/** The channels with deliveries due and unclaimed now: what a poll wakes. */
export async function channelsWithDueNotifications(db: Db): Promise<NotificationChannel[]> {
  const { rows } = await sql<{ channel: NotificationChannel }>`
    SELECT DISTINCT channel FROM notification_deliveries
    WHERE status = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())`.execute(db);
  return rows.map((r) => r.channel);
}

export type NotificationAttempt =
  | { deliveryId: string; outcome: 'succeeded' }
  | { deliveryId: string; outcome: 'retry'; error: string; nextAttemptAt: Date }
  | { deliveryId: string; outcome: 'failed'; error: string };

/**
 * Records attempts, in one statement however many: each outcome, its error, when the next attempt is
 * due; each claim is let go.
 */
export async function recordNotificationAttempts(db: Db, attempts: readonly NotificationAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const col = <T>(pick: (a: NotificationAttempt) => T) => attempts.map(pick);
  await sql`
    UPDATE notification_deliveries d SET
      status = r.status, attempts = d.attempts + 1, last_attempt_at = now(), claimed_until = NULL, last_error = r.error,
      next_attempt_at = coalesce(r.next_attempt_at, d.next_attempt_at),
      delivered_at = CASE WHEN r.status = 'succeeded' THEN now() END
    FROM unnest(
      ${col((a) => a.deliveryId)}::bigint[],
      ${col((a) => (a.outcome === 'retry' ? 'pending' : a.outcome))}::text[],
      ${col((a) => (a.outcome === 'succeeded' ? null : a.error))}::text[],
      ${col((a) => (a.outcome === 'retry' ? a.nextAttemptAt.toISOString() : null))}::timestamptz[]
    ) AS r(id, status, error, next_attempt_at)
    WHERE d.id = r.id`.execute(db);
}

/** Hands claimed deliveries back unsent: due as they were, for whichever process claims them next. */
export async function releaseNotifications(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE notification_deliveries SET claimed_until = NULL WHERE id = ANY(${ids}::bigint[]) AND status = 'pending'`.execute(db);
}

/** A browser's subscription the push service says is gone: forgotten, with its pending deliveries. */
export async function forgetPushSubscription(db: Db, id: number): Promise<void> {
  await sql`DELETE FROM push_subscriptions WHERE id = ${id}`.execute(db);
  await sql`UPDATE notification_deliveries SET status = 'failed', last_error = 'the browser\'s subscription is gone', claimed_until = NULL
    WHERE push_subscription_id = ${id} AND status = 'pending'`.execute(db);
}

/** Deletes finished deliveries older than `retentionMs`, a batch at a time; returns how many. */
export async function pruneNotificationDeliveries(db: Db, retentionMs: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const { numAffectedRows } = await sql`
      DELETE FROM notification_deliveries WHERE id IN (
        SELECT id FROM notification_deliveries
        WHERE created_at < now() - ${retentionMs}::float8 * interval '1 millisecond' AND status <> 'pending'
        LIMIT ${batch})`.execute(db);
    const n = Number(numAffectedRows ?? 0);
    total += n;
    if (n < batch) return total;
  }
}

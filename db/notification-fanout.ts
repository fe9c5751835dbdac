import { sql } from 'kysely';
import {
  planNotifications, type LoggedEventForRules, type NotificationRule, type PlannedDelivery, type RecipientState,
} from '../domain/notifications/notification-rule.ts';
import type { NotificationSchedule } from '../domain/notifications/notification-schedule.ts';
import { inTransaction, type Db } from './database.ts';
import type { NotificationRecipient } from '../domain/notifications/notification-rule.ts';

interface RuleRow {
  id: number; account_id: number; mode: 'live' | 'test'; events: string[]; vehicle_scope: 'all' | 'groups' | 'list';
  group_ids: number[]; device_ids: number[]; geofence_ids: number[] | null; schedule: NotificationSchedule | null;
  timezone: string; min_interval_s: number; recipients: NotificationRecipient[]; created_at: Date;
}

interface EventRow {
  id: string; account_id: number; mode: 'live' | 'test' | null; type: string; device_id: number | null; user_id: number | null;
  occurred_at: Date; recorded_at: Date; data: Record<string, unknown>;
}

const ruleOf = (r: RuleRow): NotificationRule => ({
  id: r.id, accountId: r.account_id, mode: r.mode, events: r.events, vehicleScope: r.vehicle_scope, groupIds: r.group_ids,
  deviceIds: r.device_ids, geofenceIds: r.geofence_ids, schedule: r.schedule, timezone: r.timezone, minIntervalS: r.min_interval_s,
  recipients: r.recipients, createdAt: r.created_at,
});

/** Kinds never notified are not read at all: positions are never logged, webhook kinds concern integrators. */
const NOT_READ = ['vehicle.position', 'webhook.disabled', 'webhook.test'];

/** Whether events were logged after the notification cursor: one read, no lock, for polls that mostly find none. */
export async function eventsAfterNotificationCursor(db: Db): Promise<boolean> {
  const { rows } = await sql<{ any: boolean }>`
    SELECT EXISTS (SELECT 1 FROM events WHERE id > (SELECT last_event_id FROM notification_fanout_cursor)) AS any`.execute(db);
  return rows[0]?.any ?? false;
}

/**
 * Turns the events logged after the notification cursor into deliveries and moves the cursor past
 * them, in one transaction; the cursor row's lock makes processes take turns, and the unique index
 * (event, recipient, channel, browser) keeps a turn that re-reads from adding twice. Only events of
 * accounts with an enabled rule are read beyond their ids. Returns how many events were passed and
 * the deliveries made, by channel, so the sender can be woken for them.
 */
export async function fanOutNotifications(db: Db, limit: number): Promise<{ events: number; deliveries: number; channels: Set<string> }> {
  return inTransaction(db, async (trx) => {
    const { rows: [cursor] } = await sql<{ last_event_id: string }>`SELECT last_event_id::text AS last_event_id FROM notification_fanout_cursor FOR UPDATE`.execute(trx);
    if (!cursor) return { events: 0, deliveries: 0, channels: new Set<string>() };
    const { rows: [range] } = await sql<{ upto: string | null; n: number }>`
      SELECT max(id)::text AS upto, count(*)::int AS n FROM (
        SELECT id FROM events WHERE id > ${cursor.last_event_id}::bigint ORDER BY id LIMIT ${limit}
      ) batch`.execute(trx);
    if (!range?.upto) return { events: 0, deliveries: 0, channels: new Set<string>() };

    const { rows: ruleRows } = await sql<RuleRow>`SELECT * FROM notification_rules WHERE enabled ORDER BY id`.execute(trx);
    let planned: PlannedDelivery[] = [];
    let notified: Array<{ ruleId: number; deviceId: number; at: Date }> = [];
    if (ruleRows.length > 0) {
      const accounts = [...new Set(ruleRows.map((r) => r.account_id))];
      const { rows: eventRows } = await sql<EventRow>`
        SELECT e.id::text AS id, e.account_id, e.mode, e.type, e.device_id, e.user_id, e.occurred_at, e.recorded_at, e.data
        FROM events e
        WHERE e.id > ${cursor.last_event_id}::bigint AND e.id <= ${range.upto}::bigint
          AND e.account_id = ANY(${accounts}::int[]) AND NOT (e.type = ANY(${NOT_READ}::text[]))
        -- By the log's order: an unqualified id would sort by the text column above.
        ORDER BY e.id`.execute(trx);
      if (eventRows.length > 0) ({ deliveries: planned, notified } = await plan(trx, eventRows, ruleRows.map(ruleOf)));
    }
    if (planned.length > 0) {
      await sql`
        INSERT INTO notification_deliveries (account_id, rule_id, user_id, channel, push_subscription_id, event_id, event_type)
        SELECT * FROM unnest(
          ${planned.map((d) => d.accountId)}::int[], ${planned.map((d) => d.ruleId)}::int[], ${planned.map((d) => d.userId)}::int[],
          ${planned.map((d) => d.channel)}::text[], ${planned.map((d) => d.pushSubscriptionId)}::int[],
          ${planned.map((d) => d.eventId)}::bigint[], ${planned.map((d) => d.eventType)}::text[])
        ON CONFLICT DO NOTHING`.execute(trx);
    }
    if (notified.length > 0) {
      await sql`
        INSERT INTO notification_rule_vehicles (rule_id, device_id, last_notified_at)
        SELECT * FROM unnest(${notified.map((n) => n.ruleId)}::int[], ${notified.map((n) => n.deviceId)}::int[], ${notified.map((n) => n.at.toISOString())}::timestamptz[])
        ON CONFLICT (rule_id, device_id) DO UPDATE SET last_notified_at = greatest(notification_rule_vehicles.last_notified_at, excluded.last_notified_at)`.execute(trx);
    }
    await sql`UPDATE notification_fanout_cursor SET last_event_id = ${range.upto}::bigint`.execute(trx);
    return { events: range.n, deliveries: planned.length, channels: new Set(planned.map((d) => d.channel)) };
  });
}

/** Reads what the rules need to know about the batch's vehicles and recipients, and asks the domain for the plan. */
async function plan(trx: Db, eventRows: EventRow[], rules: NotificationRule[]) {
  const events: LoggedEventForRules[] = eventRows.map((e) => ({
    id: e.id, accountId: e.account_id, mode: e.mode, type: e.type, deviceId: e.device_id, userId: e.user_id,
    occurredAt: e.occurred_at, recordedAt: e.recorded_at, data: e.data,
  }));
  const deviceIds = [...new Set(events.flatMap((e) => (e.deviceId === null ? [] : [e.deviceId])))];
  const userIds = [...new Set(rules.flatMap((r) => r.recipients.map((p) => p.userId)))];
  const ruleIds = rules.filter((r) => r.minIntervalS > 0).map((r) => r.id);

  const [groups, recipients, visible, pushes, last] = await Promise.all([
    sql<{ device_id: number; group_id: number }>`SELECT device_id, group_id FROM vehicle_group_devices WHERE device_id = ANY(${deviceIds}::int[])`.execute(trx),
    sql<{ id: number; account_id: number; muted: boolean }>`
      SELECT u.id, u.account_id,
        coalesce(c.muted_until > now() OR (c.muted AND c.muted_until IS NULL), false) AS muted
      FROM users u LEFT JOIN notification_channels c ON c.user_id = u.id
      WHERE u.id = ANY(${userIds}::int[]) AND u.removed_at IS NULL`.execute(trx),
    sql<{ user_id: number; device_id: number }>`SELECT user_id, device_id FROM user_devices WHERE user_id = ANY(${userIds}::int[]) AND device_id = ANY(${deviceIds}::int[])`.execute(trx),
    sql<{ id: number; user_id: number }>`SELECT id, user_id FROM push_subscriptions WHERE user_id = ANY(${userIds}::int[]) ORDER BY id`.execute(trx),
    sql<{ rule_id: number; device_id: number; last_notified_at: Date }>`
      SELECT rule_id, device_id, last_notified_at FROM notification_rule_vehicles WHERE rule_id = ANY(${ruleIds}::int[]) AND device_id = ANY(${deviceIds}::int[])`.execute(trx),
  ]);

  const groupsOf = new Map<number, number[]>();
  for (const g of groups.rows) (groupsOf.get(g.device_id) ?? groupsOf.set(g.device_id, []).get(g.device_id)!).push(g.group_id);
  const sees = new Set(visible.rows.map((v) => `${v.user_id}:${v.device_id}`));
  const pushOf = new Map<number, number[]>();
  for (const p of pushes.rows) (pushOf.get(p.user_id) ?? pushOf.set(p.user_id, []).get(p.user_id)!).push(p.id);
  const lastOf = new Map(last.rows.map((l) => [`${l.rule_id}:${l.device_id}`, l.last_notified_at]));
  const accountOfRule = new Map(rules.map((r) => [r.id, r.accountId]));
  const states = new Map<number, RecipientState & { accountId: number }>();
  for (const u of recipients.rows) {
    states.set(u.id, {
      accountId: u.account_id,
      active: !u.muted,
      mayReadDevice: (deviceId) => sees.has(`${u.id}:${deviceId}`),
      pushSubscriptionIds: pushOf.get(u.id) ?? [],
    });
  }
  // A recipient is only ever a user of the rule's own account: the API checks it, and so does this.
  const accountRules = rules.map((r) => ({ ...r, recipients: r.recipients.filter((p) => states.get(p.userId)?.accountId === accountOfRule.get(r.id)) }));
  return planNotifications(events, accountRules, {
    groupsOfDevice: (deviceId) => groupsOf.get(deviceId) ?? [],
    recipient: (userId) => states.get(userId),
    lastNotified: (ruleId, deviceId) => lastOf.get(`${ruleId}:${deviceId}`),
  });
}

import { sql } from 'kysely';
import type { NotificationServer } from '../api/route-deps.ts';
import { notificationConfig } from '../cli/notification-config.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { eventMessage } from '../domain/notifications/notification-message.ts';
import { createChannels } from '../engine/notifications/channels/create-channels.ts';
import type { NotificationConfig } from '../engine/notifications/notification-config.ts';
import { startNotifications, type RunningNotifications } from '../engine/notifications/start-notifications.ts';
import { silentLogger } from '../runtime/logger.ts';
import { normalised, startReceiverProcess, type Arrival, type ReceiverProcess } from './notification-receivers.ts';

/**
 * Vehicles (of the 1,000) each rule names: measured, at the log bench's ~350 `vehicle.*` events/s on
 * PostgreSQL about 150 emails and 50 SMS a second, 200 notifying events a second in all (~230 on
 * the embedded default, which logs more events from the same fixes). The two sets do not overlap.
 */
export const NOTIFIED_VEHICLES = { email: 430, sms: 140 } as const;
type BenchChannel = keyof typeof NOTIFIED_VEHICLES;

export interface NotificationRow {
  channel: BenchChannel;
  vehicles: number;
  /** Deliveries the rule made from the run's events. */
  deliveries: number;
  /** Deliveries over the load's seconds: the rate the rule asks for. */
  madePerSec: number;
  /** Messages the receiver had while the load ran, per second of it. */
  sentPerSec: number;
  received: number;
  /** From the event's `recorded_at` to its delivery row (the fan-out's transaction). */
  fanOutP50Ms: number;
  fanOutP99Ms: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  failed: number;
  pending: number;
  /** Received messages that match no delivery's event (a check: 0). */
  unmatched: number;
}

/**
 * Notifications for people in the events bench, as `fleet serve` runs them with SMTP_URL, SMTP_FROM and
 * SMS_URL set: a local mail server and SMS gateway (in a process of their own), the configuration read from those variables, the
 * channels, fan-out and sender of the engine role, and two rules (`vehicle.*`: email on one set of
 * vehicles, SMS on another) with the recipient's phone, made through the REST API as a user would.
 */
export class BenchNotifications {
  private running: RunningNotifications | undefined;
  private ruleIds: number[] = [];

  private constructor(
    private readonly config: NotificationConfig,
    private readonly receivers: ReceiverProcess,
  ) {}

  static async open(): Promise<BenchNotifications> {
    const receivers = await startReceiverProcess();
    // NOTIFICATION_CONCURRENCY and the other delivery settings pass through, to measure them.
    const delivery = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('NOTIFICATION_')));
    const env = { ...delivery, SMTP_URL: receivers.urls.email, SMTP_FROM: 'Fleet bench <fleet@example.com>', SMS_URL: receivers.urls.sms };
    return new BenchNotifications(notificationConfig(env, { allowPrivate: true }), receivers);
  }

  /** What the API tells users of this server's channels (as the API role builds it from the same configuration). */
  get server(): NotificationServer {
    const c = this.config;
    return {
      available: { email: Boolean(c.email), push: Boolean(c.push), telegram: Boolean(c.telegram), sms: Boolean(c.sms) },
      vapidPublicKey: c.push?.publicKey ?? null, allowPrivatePushEndpoints: true,
    };
  }

  /**
   * The recipient's phone and the two rules through the API at `apiUrl` (…/api/v1) with `key`, then
   * sending from the end of the log on. `imeis`: the run's vehicles, in a fixed order.
   */
  async start(handle: DatabaseHandle, api: { url: string; key: string }, userId: number, imeis: string[]): Promise<void> {
    await call(api, 'PATCH', '/users/me/notification-channels', { phone: '+15550100200' });
    let first = 0;
    for (const channel of ['email', 'sms'] as const) {
      const vehicleIds = imeis.slice(first, first + NOTIFIED_VEHICLES[channel]);
      first += vehicleIds.length;
      const rule = await call(api, 'POST', '/notification-rules', {
        name: `Bench ${channel}`, events: ['vehicle.*'], vehicles: { scope: 'list', vehicleIds }, geofenceIds: null, schedule: null,
        minIntervalSeconds: 0, recipients: [{ userId, channels: [channel] }],
      }) as { id: number };
      this.ruleIds.push(rule.id);
    }
    // A server that has run all along has its fan-out at the log's end; earlier runs' events are not this run's.
    await sql`UPDATE notification_fanout_cursor SET last_event_id = (SELECT coalesce(max(id), 0) FROM events)`.execute(handle.db);
    const c = this.config;
    // As the engine role starts them (cli/server/engine-role.ts), with no report subscriptions to schedule.
    this.running = await startNotifications(handle, silentLogger, createChannels(c, silentLogger), {
      concurrency: c.concurrency, retryDelaysMs: c.retryDelaysMs, timeoutMs: c.timeoutMs, pollMs: 250, deliveryRetentionMs: c.deliveryRetentionMs,
    }, {
      message: () => Promise.reject(new Error('no report subscriptions in the bench')),
      start: () => ({ close: async () => {} }),
    });
  }

  /** The fan-out has read the whole log and no delivery of the rules is left pending. */
  async settled(handle: DatabaseHandle): Promise<boolean> {
    const { rows: [state] } = await sql<{ behind: boolean; pending: number }>`
      SELECT (SELECT last_event_id FROM notification_fanout_cursor) < (SELECT coalesce(max(id), 0) FROM events) AS behind,
        (SELECT count(*) FROM notification_deliveries WHERE rule_id = ANY(${this.ruleIds}::int[]) AND status = 'pending')::int AS pending
    `.execute(handle.db);
    return Boolean(state && !state.behind && state.pending === 0);
  }

  /**
   * Per channel: each received message paired with the delivery whose event's message it is (same
   * text, oldest event first), its delay from the event's `recorded_at` to its arrival, for events
   * recorded from `timedFrom` on; the rate over the load's `[loadStart, loadEnd]`.
   */
  async results(handle: DatabaseHandle, times: { timedFrom: number; loadStart: number; loadEnd: number }): Promise<NotificationRow[]> {
    const { rows } = await sql<{ channel: BenchChannel; status: string; created_at: Date; type: string; occurred_at: Date; recorded_at: Date; data: Record<string, unknown>; timezone: string }>`
      SELECT d.channel, d.status, d.created_at, e.type, e.occurred_at, e.recorded_at, e.data, u.timezone
      FROM notification_deliveries d JOIN events e ON e.id = d.event_id JOIN users u ON u.id = d.user_id
      WHERE d.rule_id = ANY(${this.ruleIds}::int[])
      ORDER BY e.id
    `.execute(handle.db);
    const seconds = (times.loadEnd - times.loadStart) / 1000;
    const received: Record<BenchChannel, Arrival[]> = await this.receivers.collect();
    const table: NotificationRow[] = [];
    for (const channel of ['email', 'sms'] as const) {
      const mine = rows.filter((r) => r.channel === channel);
      // Recorded times of the events each text tells of, oldest first.
      const expected = new Map<string, number[]>();
      for (const r of mine) {
        const message = eventMessage({ type: r.type, occurredAt: r.occurred_at, data: r.data }, { timezone: r.timezone });
        const key = normalised(channel === 'email' ? message.text : message.short);
        const list = expected.get(key) ?? [];
        list.push(r.recorded_at.getTime());
        expected.set(key, list);
      }
      const arrivals = received[channel].sort((a, b) => a.at - b.at);
      const delays: number[] = [];
      let unmatched = 0;
      for (const arrival of arrivals) {
        const recordedAt = expected.get(arrival.text)?.shift();
        if (recordedAt === undefined) unmatched++;
        else if (recordedAt >= times.timedFrom) delays.push(arrival.at - recordedAt);
      }
      delays.sort((a, b) => a - b);
      const fanOut = mine.filter((r) => r.recorded_at.getTime() >= times.timedFrom)
        .map((r) => r.created_at.getTime() - r.recorded_at.getTime()).sort((a, b) => a - b);
      table.push({
        channel, vehicles: NOTIFIED_VEHICLES[channel], deliveries: mine.length,
        madePerSec: Math.round(mine.length / seconds),
        sentPerSec: Math.round(arrivals.filter((a) => a.at >= times.loadStart && a.at <= times.loadEnd).length / seconds),
        received: arrivals.length,
        fanOutP50Ms: rank(fanOut, 50), fanOutP99Ms: rank(fanOut, 99),
        p50Ms: rank(delays, 50), p95Ms: rank(delays, 95), p99Ms: rank(delays, 99), maxMs: delays[delays.length - 1] ?? 0,
        failed: mine.filter((r) => r.status === 'failed').length, pending: mine.filter((r) => r.status === 'pending').length,
        unmatched,
      });
    }
    return table;
  }

  /** Stops sending and turns the run's rules off, so a later run on the same database is not notified by them. */
  async close(handle: DatabaseHandle): Promise<void> {
    await this.running?.close();
    this.receivers.close();
    if (this.ruleIds.length > 0) await sql`UPDATE notification_rules SET enabled = false WHERE id = ANY(${this.ruleIds}::int[])`.execute(handle.db);
  }
}

/** Nearest-rank percentile of sorted delays. */
function rank(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

async function call(api: { url: string; key: string }, method: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${api.url}${path}`, {
    method, headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (JSON.parse(text) as { data: unknown }).data;
}

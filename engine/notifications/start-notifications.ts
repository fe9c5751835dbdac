import type { DatabaseHandle } from '../../db/database.ts';
import { eventsAfterNotificationCursor, fanOutNotifications } from '../../db/notification-fanout.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import { pruneNotificationDeliveries, type ClaimedNotification } from '../../db/notification-deliveries.ts';
import type { NotificationMessage } from '../../domain/notifications/notification-message.ts';
import type { NotificationChannel } from '../../domain/notifications/notification-rule.ts';
import { CoalescedRun } from '../../runtime/coalesced-run.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { ChannelSender } from './channels/channel.ts';
import { HOLD_ROUNDS, NotificationSender } from './notification-sender.ts';

/** Events read per fan-out transaction; a full batch means more may follow at once. */
const FAN_OUT_BATCH = 1_000;

export interface NotificationSettings {
  /** Messages in flight at once per channel in this process. */
  concurrency: number;
  retryDelaysMs: readonly number[];
  /** The longest a channel may take for one message (its own timeout): a claim outlasts it. */
  timeoutMs: number;
  /** How often the log is read for new events when no notification says so, and due deliveries looked for. */
  pollMs: number;
  deliveryRetentionMs: number;
  publicUrl?: string;
}

export interface ReportScheduling {
  /** Builds a scheduled report's email for its delivery. */
  message(delivery: ClaimedNotification): Promise<NotificationMessage>;
  /** Starts the schedule check; `scheduled` is called when it made deliveries. */
  start(scheduled: () => void): { close(): Promise<void> };
}

export interface RunningNotifications {
  /** Reads the log now (tests, and anything that knows events were just logged). */
  wake(): void;
  close(): Promise<void>;
}

/**
 * Notifications for people, in an engine process: fan-out follows the event log (woken by NOTIFY on
 * PostgreSQL and by its poll everywhere) and turns events into deliveries per rule, recipient and
 * channel (db/notification-fanout.ts); the sender claims due deliveries per channel and sends them
 * (NotificationSender); scheduled reports make deliveries of their own at their times. Every step
 * is a database row first, so a restart or a second process picks up where the first left off.
 */
export async function startNotifications(
  database: DatabaseHandle,
  log: Logger,
  channels: Partial<Record<NotificationChannel, ChannelSender>>,
  settings: NotificationSettings,
  reports: ReportScheduling,
): Promise<RunningNotifications> {
  const { db } = database;
  const sender = new NotificationSender(db, log, channels, {
    concurrency: settings.concurrency,
    retryDelaysMs: settings.retryDelaysMs,
    // Long enough for every message a lane holds to be tried (each round at most a timeout) and recorded.
    claimMs: settings.timeoutMs * HOLD_ROUNDS + 30_000,
    // New deliveries wake their lanes from this process's fan-out at once; the poll finds retries
    // (due to the second) and what another process's fan-out made and did not send.
    pollMs: Math.max(settings.pollMs, 1_000),
    ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
  }, reports.message);

  const fanOut = new CoalescedRun(async () => {
    // Most polls find nothing new: a read without the cursor's lock says so.
    if (!(await eventsAfterNotificationCursor(db))) return;
    for (;;) {
      const { events, deliveries, channels: woken } = await fanOutNotifications(db, FAN_OUT_BATCH);
      if (deliveries > 0) sender.wake(woken);
      if (events < FAN_OUT_BATCH) return;
    }
  }, { failed: (error) => log.warn('notification fan-out failed; retrying', { error: error.message }) });

  const prune = new CoalescedRun(async () => {
    const pruned = await pruneNotificationDeliveries(db, settings.deliveryRetentionMs);
    if (pruned > 0) log.info('notification deliveries pruned', { pruned });
  }, { failed: (error) => log.warn('notification delivery pruning failed', { error: error.message }) });

  sender.start();
  const scheduler = reports.start(() => sender.wake(['email']));
  const fanTimer = setInterval(fanOut.request, settings.pollMs);
  fanTimer.unref();
  const pruneTimer = setInterval(prune.request, 3_600_000);
  pruneTimer.unref();
  let listener: NotificationListener | undefined;
  if (database.listenPool) {
    listener = listenForNotifications(database.listenPool, 'fleetcore_events', fanOut.request);
    await listener.ready;
  }
  fanOut.request();
  prune.request();

  return {
    wake: fanOut.request,
    async close() {
      clearInterval(fanTimer);
      clearInterval(pruneTimer);
      listener?.close();
      await Promise.allSettled([fanOut.close(), prune.close(), scheduler.close()]);
      await sender.close();
      await Promise.allSettled(Object.values(channels).map((c) => c.close()));
    },
  };
}

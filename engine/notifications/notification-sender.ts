import type { Db } from '../../db/database.ts';
import {
  channelsWithDueNotifications, claimDueNotifications, forgetPushSubscription, recordNotificationAttempts, releaseNotifications, type ClaimedNotification, type NotificationAttempt,
} from '../../db/notification-deliveries.ts';
import { eventMessage, type NotificationMessage } from '../../domain/notifications/notification-message.ts';
import { NOTIFICATION_CHANNELS, type NotificationChannel } from '../../domain/notifications/notification-rule.ts';
import type { Logger } from '../../runtime/logger.ts';
import { engineMetrics } from '../engine-metrics.ts';
import { nextRetryDelay } from '../webhooks/retry-schedule.ts';
import { StatementBatcher } from '../webhooks/statement-batcher.ts';
import type { ChannelAddress, ChannelResult, ChannelSender } from './channels/channel.ts';

export interface NotificationSendingSettings {
  /** Messages in flight at once per channel in this process: a slow channel fills its own lane only. */
  concurrency: number;
  /** Waits between attempts; after the last, the delivery is failed. */
  retryDelaysMs: readonly number[];
  /** How long one attempt may take before another process may claim the delivery. */
  claimMs: number;
  /** How often due deliveries (retries, other processes' fan-out) are looked for when nothing says so. */
  pollMs: number;
  /** The server's public address, for links in messages. */
  publicUrl?: string;
}

/** What a channel needs to say why it cannot be used, for the delivery log. */
const NOT_CONFIGURED: Record<NotificationChannel, string> = {
  email: 'email is not configured on this server (SMTP_URL, SMTP_FROM)',
  push: 'web push is not configured on this server (VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT)',
  telegram: 'Telegram is not configured on this server (TELEGRAM_BOT_TOKEN)',
  sms: 'SMS is not configured on this server (SMS_URL)',
};

/** A message and its address, or why there is none to send. */
type Prepared = { message: NotificationMessage; address: ChannelAddress } | { failed: string };

/**
 * Sends claimed notification deliveries, one lane per channel: each claims due rows of its channel as
 * it has room (claimDueNotifications), builds the message (the event's, or a scheduled report's),
 * sends it, and records the attempt with its next retry. A lane that waits on a slow SMTP server or
 * gateway holds up no other channel, and the engine never waits for any of them.
 */
export class NotificationSender {
  private readonly lanes = new Map<NotificationChannel, Lane>();
  private timer: NodeJS.Timeout | undefined;
  /** Attempts recorded a batch at a time: one statement for many messages, which the embedded database needs under load. */
  private readonly records: StatementBatcher<NotificationAttempt, void>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly channels: Partial<Record<NotificationChannel, ChannelSender>>,
    private readonly settings: NotificationSendingSettings,
    /** Builds a scheduled report's email. */
    private readonly reportMessage: (delivery: ClaimedNotification) => Promise<NotificationMessage>,
  ) {
    for (const channel of NOTIFICATION_CHANNELS) this.lanes.set(channel, new Lane(channel, this));
    this.records = new StatementBatcher<NotificationAttempt, void>(async (attempts) => {
      await recordNotificationAttempts(db, attempts);
      return attempts.map(() => undefined);
    }, { maxDelayMs: 10, maxItems: 200 });
  }

  /** Sends what is due now, and looks for due deliveries (retries, other processes') every `pollMs`. */
  start(): void {
    this.timer = setInterval(() => void this.poll(), this.settings.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** One read for every channel: a lane claims only when its channel has something due. */
  private async poll(): Promise<void> {
    try {
      this.wake(await channelsWithDueNotifications(this.db));
    } catch (error) {
      this.log.warn('notification poll failed; retrying at the next', { error: (error as Error).message });
    }
  }

  /** Deliveries may be due on these channels (all when none named). */
  wake(channels: Iterable<string> = NOTIFICATION_CHANNELS): void {
    for (const channel of channels) this.lanes.get(channel as NotificationChannel)?.pump();
  }

  /** Stops claiming; resolves when the messages in flight have been recorded. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.lanes.values()].map((lane) => lane.close()));
  }

  /**
   * @internal one delivery, start to record; `sent` is called once the channel has answered, freeing
   * the lane's slot while the attempt is recorded (the claim keeps anyone else from sending it meanwhile).
   */
  async deliver(delivery: ClaimedNotification, sent: () => void): Promise<void> {
    const started = Date.now();
    let result: ChannelResult;
    try {
      const prepared = await this.prepare(delivery).catch((error: Error): Prepared => ({ failed: `message not built: ${error.message}` }));
      if ('failed' in prepared) result = { outcome: 'failed', error: prepared.failed };
      else result = await this.channels[delivery.channel]!.send(prepared.address, prepared.message)
        .catch((error: Error): ChannelResult => ({ outcome: 'retry', error: error.message }));
    } finally {
      sent();
    }
    const attempt = this.attemptOf(delivery, result);
    engineMetrics.notificationDeliveries.inc({ channel: delivery.channel, outcome: attempt.outcome });
    engineMetrics.notificationSeconds.observe({ channel: delivery.channel }, (Date.now() - started) / 1000);
    if (attempt.outcome === 'succeeded') {
      const from = delivery.event?.recordedAt ?? delivery.createdAt;
      engineMetrics.notificationDelay.observe({ channel: delivery.channel }, Math.max(0, Date.now() - from.getTime()) / 1000);
    } else {
      this.log.warn('notification not delivered', { deliveryId: delivery.id, channel: delivery.channel, outcome: attempt.outcome, error: attempt.error });
    }
    await this.records.call(attempt);
    if (result.outcome === 'failed' && result.gone && delivery.pushSubscriptionId !== null) await forgetPushSubscription(this.db, delivery.pushSubscriptionId);
  }

  /** @internal */
  claim(channel: NotificationChannel, limit: number): Promise<ClaimedNotification[]> {
    return claimDueNotifications(this.db, channel, limit, this.settings.claimMs);
  }

  /** @internal hands claimed deliveries back, due at once, for any process. */
  async release(ids: string[]): Promise<void> {
    await releaseNotifications(this.db, ids).catch((error: Error) =>
      this.log.warn('notification deliveries not handed back at stop; their claims run out instead', { error: error.message }));
  }

  /** @internal */
  get concurrency(): number {
    return this.settings.concurrency;
  }

  /** @internal */
  warn(message: string, fields: Record<string, unknown>): void {
    this.log.warn(message, fields);
  }

  private attemptOf(delivery: ClaimedNotification, result: ChannelResult): NotificationAttempt {
    if (result.outcome === 'sent') return { deliveryId: delivery.id, outcome: 'succeeded' };
    if (result.outcome === 'failed') return { deliveryId: delivery.id, outcome: 'failed', error: result.error };
    const waitMs = nextRetryDelay(delivery.attempts + 1, this.settings.retryDelaysMs, result.retryAfterMs);
    if (waitMs === undefined) return { deliveryId: delivery.id, outcome: 'failed', error: `${result.error} (no attempts left)` };
    return { deliveryId: delivery.id, outcome: 'retry', error: result.error, nextAttemptAt: new Date(Date.now() + waitMs) };
  }

  /** The message and address, read at send time: a recipient who muted, left or cleared an address since gets nothing. */
  private async prepare(d: ClaimedNotification): Promise<Prepared> {
    if (d.removed) return { failed: 'the recipient is no longer a user of the account' };
    if (d.muted && !d.report) return { failed: 'the recipient has muted notifications' };
    if (!this.channels[d.channel]) return { failed: NOT_CONFIGURED[d.channel] };
    const address = addressOf(d);
    if (typeof address === 'string') return { failed: address };
    if (d.report) return { message: await this.reportMessage(d), address };
    if (!d.event) return { failed: 'the event is no longer in the log' };
    return { message: eventMessage(d.event, { timezone: d.timezone, ...(this.settings.publicUrl ? { publicUrl: this.settings.publicUrl } : {}) }), address };
  }
}

/** The recipient's address on the delivery's channel, or why they have none. */
function addressOf(d: ClaimedNotification): ChannelAddress | string {
  switch (d.channel) {
    case 'email': return d.email ? { email: d.email } : 'the recipient has no email address';
    case 'telegram': return d.telegramChatId ? { telegramChatId: d.telegramChatId } : 'the recipient has no Telegram chat';
    case 'sms': return d.phone ? { phone: d.phone } : 'the recipient has no phone number';
    case 'push': return d.push ? { push: d.push } : d.pushSubscriptionId === null ? 'the recipient has no browser subscribed to notifications' : 'the browser\'s subscription is gone';
  }
}

/**
 * Deliveries a lane holds (waiting and in flight), in messages it may have in flight: claiming a few
 * rounds ahead costs one statement per several rounds, which is what keeps a lane sending while the
 * database answers slowly (the embedded one, one statement at a time behind the engine's writes).
 */
export const HOLD_ROUNDS = 4;

/**
 * One channel's sending: at most `concurrency` messages in flight, from at most HOLD_ROUNDS times as
 * many claimed deliveries held here; a claim (one at a time) tops the lane up once it has run down
 * to half. The last one held waits at most HOLD_ROUNDS attempts' timeouts, within its claim.
 */
class Lane {
  private inFlight = 0;
  private readonly waiting: ClaimedNotification[] = [];
  private claiming: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly channel: NotificationChannel,
    private readonly sender: NotificationSender,
  ) {}

  pump(): void {
    if (this.closed) return;
    while (this.inFlight < this.sender.concurrency && this.waiting.length > 0) this.start(this.waiting.shift()!);
    if (this.claiming) {
      this.again = true;
      return;
    }
    const hold = this.sender.concurrency * HOLD_ROUNDS;
    const held = this.inFlight + this.waiting.length;
    if (held > 0 && held > hold / 2) return;
    this.claiming = this.claim(hold - held).finally(() => {
      this.claiming = undefined;
      if (this.again) {
        this.again = false;
        this.pump();
      }
    });
  }

  /** Stops claiming and starting; hands back what it held but had not started, and waits for what is in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.claiming;
    await this.sender.release(this.waiting.splice(0).map((d) => d.id));
    await Promise.allSettled([...this.running]);
  }

  private async claim(room: number): Promise<void> {
    let claimed: ClaimedNotification[];
    try {
      claimed = await this.sender.claim(this.channel, room);
    } catch (error) {
      this.sender.warn('notification claim failed; retrying at the next poll', { channel: this.channel, error: (error as Error).message });
      return;
    }
    this.waiting.push(...claimed);
    // Start what came, and claim again if the lane is still low (a full batch: more may be due).
    if (claimed.length > 0) this.again = true;
  }

  private start(delivery: ClaimedNotification): void {
    this.inFlight++;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.inFlight--;
      this.pump();
    };
    const sending = this.sender.deliver(delivery, free)
      .catch((error: Error) => this.sender.warn('notification attempt not recorded; its claim runs out and it is sent again', { deliveryId: delivery.id, error: error.message }))
      .finally(() => {
        free();
        this.running.delete(sending);
      });
    this.running.add(sending);
  }
}

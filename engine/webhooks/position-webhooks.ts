import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { positionWebhooks, type PositionWebhook } from '../../db/position-feed-subscribers.ts';
import type { EventPayload } from '../../domain/events/event-payloads.ts';
import { BoundedQueue, inFixTimeOrder, positionBatchBody, positionMessage, type FeedFix } from '../../domain/events/position-feed.ts';
import type { Logger } from '../../runtime/logger.ts';
import { postWebhook } from './webhook-request.ts';
import { signWebhook } from './webhook-signature.ts';

export interface PositionWebhookSettings {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Positions in one request at most (one signature for all of them). */
  batchSize: number;
  /** Requests in flight to one webhook at most; a vehicle's positions always go through the same one. */
  inFlight: number;
  /** Positions waiting for one webhook at most; past it the oldest are dropped. */
  maxQueued: number;
  /** How often the subscribed webhooks and their vehicles are read again. */
  refreshMs: number;
}

/** The batch size, queue bound and refresh the server uses (decision 0022). */
export const POSITION_WEBHOOK_DEFAULTS = { batchSize: 1000, inFlight: 4, maxQueued: 50_000, refreshMs: 5_000 } as const;

/** Waits between attempts of a batch its receiver did not take: quick at first, then every 30 s. */
export const POSITION_RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

interface Lane {
  hook: PositionWebhook;
  /** One request in flight each; a vehicle always in the same one (device id modulo their number), so its order holds. */
  slots: Slot[];
}

interface Slot {
  queue: BoundedQueue<EventPayload>;
  /** The batch sent or to be sent again, with its webhook-id (the same on every attempt). */
  pending: { id: string; messages: EventPayload[] } | undefined;
  sending: boolean;
  failures: number;
  retry: NodeJS.Timeout | undefined;
}

/** What the sender has done since it started, for the bench, the tests and the logs. */
export interface PositionWebhookCounts {
  delivered: number;
  requests: number;
  failedAttempts: number;
  dropped: number;
}

/**
 * Sends `vehicle.position` to the webhooks that name it, from the process that stored the fixes: each
 * webhook has a lane of its positions (only its owner's vehicles, of its mode) split into `inFlight`
 * slots by vehicle, each a bounded queue with one request in flight carrying up to `batchSize`
 * positions under one Standard Webhooks signature, so its receiver gets each vehicle's positions in
 * the order they were stored. A request
 * that fails is sent again (same webhook-id and body) after POSITION_RETRY_DELAYS_MS while positions
 * keep queuing behind it; past `maxQueued` the oldest queued are dropped. Nothing is written to the
 * database per position: the guarantee is at least once while queued in this process, and best
 * effort beyond the bound or across a restart (decision 0022).
 */
export class PositionWebhookSender {
  private lanes = new Map<number, Lane>();
  private refresher: NodeJS.Timeout | undefined;
  private closed = false;
  private failing = false;
  readonly counts: PositionWebhookCounts = { delivered: 0, requests: 0, failedAttempts: 0, dropped: 0 };

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly settings: PositionWebhookSettings,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.refresher = setInterval(() => void this.refresh(), this.settings.refreshMs);
    this.refresher.unref();
  }

  /** Whether any webhook takes `vehicle.position` now. */
  get wanted(): boolean {
    return this.lanes.size > 0;
  }

  /** A committed batch of fixes: each subscribed webhook queues those of its vehicles. */
  accept(fixes: readonly FeedFix[]): void {
    if (this.lanes.size === 0 || fixes.length === 0) return;
    const ordered = inFixTimeOrder(fixes);
    for (const lane of this.lanes.values()) {
      const { vehicles } = lane.hook;
      const messages: EventPayload[][] = lane.slots.map(() => []);
      for (const f of ordered) {
        const vehicle = vehicles.get(f.deviceId);
        if (vehicle) messages[f.deviceId % lane.slots.length]!.push(positionMessage(vehicle, f));
      }
      lane.slots.forEach((slot, i) => {
        if (messages[i]!.length === 0) return;
        const before = slot.queue.dropped;
        slot.queue.push(messages[i]!);
        this.dropped(lane, slot.queue.dropped - before);
        this.pump(lane, slot);
      });
    }
  }

  /** Reads the subscribed webhooks again; changed ones take their new URL, secrets and vehicles. */
  async refresh(): Promise<void> {
    let hooks: PositionWebhook[];
    try {
      hooks = await positionWebhooks(this.db);
      if (this.failing) this.log.info('position webhooks read again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.log.warn('cannot read the position webhooks; sending to those known', { error: (error as Error).message });
      this.failing = true;
      return;
    }
    this.use(hooks);
  }

  /** Sends to these webhooks from now on: new ones get a lane, gone ones lose theirs (and what waited in it). */
  use(hooks: readonly PositionWebhook[]): void {
    if (this.closed) return;
    const next = new Map<number, Lane>();
    for (const hook of hooks) {
      const lane = this.lanes.get(hook.id);
      if (lane) {
        lane.hook = hook;
        next.set(hook.id, lane);
      } else {
        const { inFlight, maxQueued } = this.settings;
        const slots = Array.from({ length: inFlight }, (): Slot => ({
          queue: new BoundedQueue(Math.ceil(maxQueued / inFlight)), pending: undefined, sending: false, failures: 0, retry: undefined,
        }));
        next.set(hook.id, { hook, slots });
      }
    }
    for (const [id, lane] of this.lanes) {
      if (next.has(id)) continue;
      for (const slot of lane.slots) {
        clearTimeout(slot.retry);
        slot.queue.clear();
        slot.pending = undefined;
      }
    }
    this.lanes = next;
  }

  /** Positions waiting for a webhook, sent or not yet. */
  waiting(webhookId: number): number {
    const lane = this.lanes.get(webhookId);
    return lane ? lane.slots.reduce((n, slot) => n + slot.queue.length + (slot.pending?.messages.length ?? 0), 0) : 0;
  }

  private dropped(lane: Lane, n: number): void {
    if (n <= 0) return;
    this.counts.dropped += n;
    this.log.warn('positions dropped for a webhook that does not keep up', { webhookId: lane.hook.id, dropped: n, maxQueued: this.settings.maxQueued });
  }

  private pump(lane: Lane, slot: Slot): void {
    if (this.closed || slot.sending || slot.retry || this.lanes.get(lane.hook.id) !== lane) return;
    slot.pending ??= slot.queue.length > 0 ? { id: `pos_${randomUUID()}`, messages: slot.queue.take(this.settings.batchSize) } : undefined;
    if (!slot.pending) return;
    slot.sending = true;
    void this.send(lane, slot, slot.pending).finally(() => {
      slot.sending = false;
      this.pump(lane, slot);
    });
  }

  private async send(lane: Lane, slot: Slot, batch: { id: string; messages: EventPayload[] }): Promise<void> {
    const body = positionBatchBody(batch.id, new Date(), batch.messages);
    const headers = signWebhook(batch.id, Math.floor(Date.now() / 1000), body, lane.hook.secrets);
    const answer = await postWebhook(lane.hook.url, body, { ...headers }, this.settings);
    this.counts.requests++;
    if (answer.status !== undefined && answer.status >= 200 && answer.status < 300) {
      this.counts.delivered += batch.messages.length;
      slot.pending = undefined;
      slot.failures = 0;
      return;
    }
    this.counts.failedAttempts++;
    slot.failures++;
    const waitMs = POSITION_RETRY_DELAYS_MS[Math.min(slot.failures, POSITION_RETRY_DELAYS_MS.length) - 1]!;
    if (slot.failures === 1 || slot.failures % 20 === 0) {
      this.log.warn('position webhook request failed; retrying', { webhookId: lane.hook.id, status: answer.status, error: answer.error, attempt: slot.failures, waitMs });
    }
    if (this.closed) return;
    slot.retry = setTimeout(() => {
      slot.retry = undefined;
      this.pump(lane, slot);
    }, waitMs);
    slot.retry.unref();
  }

  /** Stops sending: what is queued or being retried is dropped (the feed is not kept across restarts). */
  close(): void {
    this.closed = true;
    clearInterval(this.refresher);
    for (const lane of this.lanes.values()) for (const slot of lane.slots) clearTimeout(slot.retry);
  }
}

import type { DatabaseHandle } from '../../db/database.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import { claimDeliveries, dueDeliveries, fanOutEvents, finishAttempt, recordAttempts, releaseDelivery, type AttemptRecord, type ClaimedDelivery } from '../../db/webhook-deliveries.ts';
import { engineMetrics } from '../engine-metrics.ts';
import { jobRequestId } from '../observed-job.ts';
import { StatementBatcher } from './statement-batcher.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Job, JobQueue, QueueBackend } from '../queue/job-queue.ts';
import { nextRetryDelay, parseRetryAfter, RETRY_DELAYS_MS } from './retry-schedule.ts';
import { postWebhook } from './webhook-request.ts';
import { signWebhook } from './webhook-signature.ts';

export const WEBHOOKS_QUEUE = 'fleetcore-webhooks';
/** The one job of the webhooks queue: an attempt at a delivery, data `{ deliveryId }`. */
export const DELIVERY_JOB = 'webhook-delivery';

export interface WebhookDeliverySettings {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Deliveries sent at once by this process. */
  concurrency: number;
  /** Deliveries of one webhook in flight at once in this process: a slow receiver keeps the rest of the slots free. */
  perWebhookInFlight: number;
  maxConsecutiveFailures: number;
  /** Waits between attempts (the Standard Webhooks schedule unless a test shortens it). */
  retryDelaysMs?: readonly number[];
  /** How often the log is read for new events when no notification says so. */
  fanOutPollMs: number;
  /** How often pending deliveries are put back on the queue, in case their job was lost. */
  sweepMs: number;
}

interface Lane {
  active: number;
  waiting: Array<{ delivery: ClaimedDelivery; claimedAt: number }>;
}

export interface RunningWebhookDelivery {
  close(): Promise<void>;
}

const FAN_OUT_BATCH = 1_000;
const RETRY_AFTER_STATUSES = new Set([429, 502, 504]);

/** Puts deliveries on the webhooks queue; a job id per attempt makes a second add a no-op while the first waits. */
export async function enqueueDeliveries(
  queue: JobQueue,
  deliveries: Array<{
    id: string; attempts: number; nextAttemptAt?: Date;
    /** A manual retry: a job of its own. */ again?: number;
    /** The API request that asked for it, for the delivery's log lines. */ requestId?: string;
  }>,
): Promise<void> {
  for (const d of deliveries) {
    const delay = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt.getTime() - Date.now()) : 0;
    const jobId = `delivery-${d.id}-${d.attempts}${d.again === undefined ? '' : `-again-${d.again}`}`;
    await queue.add(DELIVERY_JOB, { deliveryId: d.id, ...(d.requestId ? { requestId: d.requestId } : {}) }, { jobId, delay, attempts: 3 });
  }
}

/**
 * Webhook delivery: fan-out follows the event log (woken by NOTIFY on PostgreSQL, by its poll
 * everywhere) and turns each committed event into deliveries; each delivery is a job on its own
 * queue, apart from the engine's, that claims the delivery, signs and POSTs it, and records the
 * attempt with the next retry. Pending deliveries are put back on the queue at start and by a
 * periodic sweep, so neither a restart of the in-process queue nor a lost job loses one.
 */
export async function startWebhookDelivery(database: DatabaseHandle, backend: QueueBackend, log: Logger, settings: WebhookDeliverySettings): Promise<RunningWebhookDelivery> {
  const { db } = database;
  const queue = backend.queue(WEBHOOKS_QUEUE);
  const delays = settings.retryDelaysMs ?? RETRY_DELAYS_MS;
  // Long enough for a request to time out and its answer to be recorded.
  const claimMs = settings.timeoutMs + 30_000;
  let closed = false;
  const claims = new StatementBatcher<string, ClaimedDelivery | undefined>(
    async (ids) => {
      const claimed = await claimDeliveries(db, [...new Set(ids)], claimMs);
      // A duplicate id in one batch is claimed once, for its first caller.
      const handed = new Set<string>();
      return ids.map((id) => (handed.has(id) ? undefined : (handed.add(id), claimed.get(id))));
    },
    { maxDelayMs: 5, maxItems: 200 },
  );
  const records = new StatementBatcher<AttemptRecord, void>(async (batch) => {
    await recordAttempts(db, batch);
    return batch.map(() => undefined);
  }, { maxDelayMs: 10, maxItems: 200 });

  /**
   * At most `concurrency` requests at once in this process, and at most `perWebhookInFlight` per
   * webhook. A claimed delivery over those waits in its webhook's lane (bounded); a full lane hands it
   * back to the queue. So a slow or dead receiver fills its own lane, never the slots other webhooks
   * need, and the engine does not wait for any of it.
   */
  const lanes = new Map<number, Lane>();
  const laneCapacity = settings.perWebhookInFlight * 64;
  const running = new Set<Promise<void>>();
  let active = 0;

  function laneOf(webhookId: number) {
    let lane = lanes.get(webhookId);
    if (!lane) lanes.set(webhookId, (lane = { active: 0, waiting: [] }));
    return lane;
  }

  /** Sends now if a slot is free, else queues it in its lane; false when the lane is full. */
  function dispatch(delivery: ClaimedDelivery): boolean {
    const lane = laneOf(delivery.webhookId);
    if (lane.active < settings.perWebhookInFlight && active < settings.concurrency) {
      start(delivery, lane);
      return true;
    }
    if (lane.waiting.length >= laneCapacity) return false;
    lane.waiting.push({ delivery, claimedAt: Date.now() });
    return true;
  }

  function start(delivery: ClaimedDelivery, lane: Lane): void {
    lane.active++;
    active++;
    const sending = send(delivery, () => {
      lane.active--;
      active--;
      pump(delivery.webhookId);
    }).catch((error: Error) => log.warn('webhook delivery failed', { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.payload.id, error: error.message }));
    running.add(sending);
    void sending.finally(() => running.delete(sending));
  }

  /** Starts waiting deliveries into free slots: the lane that just freed one first, then the others. */
  function pump(freedWebhookId: number): void {
    const order = [freedWebhookId, ...[...lanes.keys()].filter((id) => id !== freedWebhookId)];
    for (const id of order) {
      const lane = lanes.get(id);
      if (!lane) continue;
      while (lane.waiting.length > 0 && lane.active < settings.perWebhookInFlight && active < settings.concurrency) {
        const next = lane.waiting.shift()!;
        // A claim that would run out during the request is let go: the sweep gives it to whoever
        // claims it next, and sending it here too would send it twice.
        if (Date.now() - next.claimedAt < claimMs - settings.timeoutMs - 5_000) start(next.delivery, lane);
      }
      if (lane.active === 0 && lane.waiting.length === 0) lanes.delete(id);
      if (active >= settings.concurrency) return;
    }
  }

  async function handBack(delivery: ClaimedDelivery): Promise<void> {
    await releaseDelivery(db, delivery.id);
    await queue.add(DELIVERY_JOB, { deliveryId: delivery.id }, { jobId: `delivery-${delivery.id}-${delivery.attempts}-wait-${Date.now()}`, delay: 1_000 });
  }

  /** A retry, a manual retry, or one the sweep found: claimed here, then sent like a new one. */
  async function deliver(job: Job): Promise<void> {
    const delivery = await claims.call(String((job.data as { deliveryId: string }).deliveryId));
    if (delivery && !dispatch(delivery)) await handBack(delivery);
  }

  async function send(delivery: ClaimedDelivery, done: () => void): Promise<void> {
    let answer;
    try {
      const body = JSON.stringify(delivery.payload);
      const headers = signWebhook(delivery.payload.id, Math.floor(Date.now() / 1000), body, delivery.secrets);
      answer = await postWebhook(delivery.url, body, { ...headers }, settings);
    } finally {
      // The slot holds the request only: recording the answer waits for the database, not the receiver.
      done();
    }
    const attempt = delivery.attempts + 1;
    const ok = answer.status !== undefined && answer.status >= 200 && answer.status < 300;
    const retryAfter = answer.status !== undefined && RETRY_AFTER_STATUSES.has(answer.status) ? parseRetryAfter(answer.retryAfter) : undefined;
    const wait = ok || answer.status === 410 ? undefined : nextRetryDelay(attempt, delays, retryAfter);
    const outcome = ok ? 'succeeded' : answer.status === 410 ? 'gone' : wait === undefined ? 'failed' : 'retry';
    const nextAttemptAt = wait === undefined ? undefined : new Date(Date.now() + wait);
    engineMetrics.webhookDeliveries.inc({ outcome });
    engineMetrics.webhookSeconds.observe(answer.durationMs / 1000);
    if (ok && delivery.recordedAt) engineMetrics.webhookDelay.observe(Math.max(0, Date.now() - delivery.recordedAt.getTime()) / 1000);
    const record: AttemptRecord = {
      deliveryId: delivery.id, webhookId: delivery.webhookId, attempt, durationMs: answer.durationMs, statusCode: answer.status,
      error: answer.error, outcome, nextAttemptAt, maxConsecutiveFailures: settings.maxConsecutiveFailures,
    };
    const { disabled } = outcome === 'succeeded' || outcome === 'retry' ? (await records.call(record), { disabled: false }) : await finishAttempt(db, record);
    if (disabled) log.warn('webhook disabled', { webhookId: delivery.webhookId, deliveryId: delivery.id, eventId: delivery.payload.id, status: answer.status, error: answer.error });
    if (nextAttemptAt) await enqueueDeliveries(queue, [{ id: delivery.id, attempts: attempt, nextAttemptAt }]);
  }

  let fanning: Promise<void> | undefined;
  let fanAgain = false;
  let fanFailing = false;
  const fanOut = (): void => {
    if (closed) return;
    if (fanning) {
      fanAgain = true;
      return;
    }
    fanning = (async () => {
      for (;;) {
        const { deliveries, events, types } = await fanOutEvents(db, FAN_OUT_BATCH, claimMs);
        for (const [type, n] of Object.entries(types)) engineMetrics.events.inc({ type }, n);
        for (const d of deliveries) if (!dispatch(d)) await handBack(d);
        if (events < FAN_OUT_BATCH) return;
      }
    })()
      .then(() => {
        fanFailing = false;
      })
      .catch((error: Error) => {
        if (!fanFailing) log.warn('webhook fan-out failed; retrying', { error: error.message });
        fanFailing = true;
      })
      .finally(() => {
        fanning = undefined;
        if (fanAgain) {
          fanAgain = false;
          fanOut();
        }
      });
  };

  const sweep = async () => {
    try {
      await enqueueDeliveries(queue, await dueDeliveries(db, settings.sweepMs, 10_000));
    } catch (error) {
      log.warn('webhook sweep failed', { error: (error as Error).message });
    }
  };

  const worker = backend.worker(WEBHOOKS_QUEUE, deliver, {
    concurrency: settings.concurrency,
    onFailed: (job, error) => log.warn('webhook delivery job failed', { jobId: job.id, attempt: job.attempt, requestId: jobRequestId(job), error: error.message }),
  });
  // Everything pending when this process starts, each at its own time.
  await sweep();
  const fanTimer = setInterval(fanOut, settings.fanOutPollMs);
  fanTimer.unref();
  const sweepTimer = setInterval(() => void sweep(), settings.sweepMs);
  sweepTimer.unref();
  let notifications: NotificationListener | undefined;
  if (database.pool) {
    notifications = listenForNotifications(database.pool, 'fleetcore_events', fanOut);
    await notifications.ready;
  }
  fanOut();

  return {
    async close() {
      closed = true;
      clearInterval(fanTimer);
      clearInterval(sweepTimer);
      notifications?.close();
      await fanning;
      await worker.close();
      // Lanes still holding claimed deliveries let them go: their claims expire and the sweep of
      // whichever process runs next takes them up.
      for (const lane of lanes.values()) lane.waiting.length = 0;
      await Promise.allSettled([...running]);
    },
  };
}

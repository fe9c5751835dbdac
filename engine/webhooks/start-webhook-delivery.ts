import type { DatabaseHandle } from '../../db/database.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import { claimDelivery, dueDeliveries, fanOutEvents, finishAttempt, releaseDelivery } from '../../db/webhook-deliveries.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Job, JobQueue, QueueBackend } from '../queue/job-queue.ts';
import { nextRetryDelay, parseRetryAfter, RETRY_DELAYS_MS } from './retry-schedule.ts';
import { postWebhook } from './webhook-request.ts';
import { signWebhook } from './webhook-signature.ts';

export const WEBHOOKS_QUEUE = 'fleetcore-webhooks';

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

export interface RunningWebhookDelivery {
  close(): Promise<void>;
}

const FAN_OUT_BATCH = 1_000;
const RETRY_AFTER_STATUSES = new Set([429, 502, 504]);

/** Puts deliveries on the webhooks queue; a job id per attempt makes a second add a no-op while the first waits. */
export async function enqueueDeliveries(
  queue: JobQueue,
  deliveries: Array<{ id: string; attempts: number; nextAttemptAt?: Date; /** A manual retry: a job of its own. */ again?: number }>,
): Promise<void> {
  for (const d of deliveries) {
    const delay = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt.getTime() - Date.now()) : 0;
    const jobId = `delivery-${d.id}-${d.attempts}${d.again === undefined ? '' : `-again-${d.again}`}`;
    await queue.add('deliver', { deliveryId: d.id }, { jobId, delay, attempts: 3 });
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
  const inFlight = new Map<number, number>();
  let closed = false;

  async function deliver(job: Job): Promise<void> {
    const deliveryId = (job.data as { deliveryId: string }).deliveryId;
    const delivery = await claimDelivery(db, deliveryId, settings.timeoutMs + 30_000);
    if (!delivery) return;
    const busy = inFlight.get(delivery.webhookId) ?? 0;
    if (busy >= settings.perWebhookInFlight) {
      // Not an attempt: handed back, and taken up again in a moment.
      await releaseDelivery(db, delivery.id);
      await queue.add('deliver', { deliveryId }, { jobId: `delivery-${delivery.id}-${delivery.attempts}-wait-${Date.now()}`, delay: 250 });
      return;
    }
    inFlight.set(delivery.webhookId, busy + 1);
    try {
      const body = JSON.stringify(delivery.payload);
      const headers = signWebhook(delivery.payload.id, Math.floor(Date.now() / 1000), body, delivery.secrets);
      const answer = await postWebhook(delivery.url, body, { ...headers }, settings);
      const attempt = delivery.attempts + 1;
      const ok = answer.status !== undefined && answer.status >= 200 && answer.status < 300;
      const retryAfter = answer.status !== undefined && RETRY_AFTER_STATUSES.has(answer.status) ? parseRetryAfter(answer.retryAfter) : undefined;
      const wait = ok || answer.status === 410 ? undefined : nextRetryDelay(attempt, delays, retryAfter);
      const outcome = ok ? 'succeeded' : answer.status === 410 ? 'gone' : wait === undefined ? 'failed' : 'retry';
      const nextAttemptAt = wait === undefined ? undefined : new Date(Date.now() + wait);
      const { disabled } = await finishAttempt(db, {
        deliveryId: delivery.id, webhookId: delivery.webhookId, attempt, durationMs: answer.durationMs, statusCode: answer.status,
        error: answer.error, outcome, nextAttemptAt, maxConsecutiveFailures: settings.maxConsecutiveFailures,
      });
      if (disabled) log.warn('webhook disabled', { webhookId: delivery.webhookId, status: answer.status, error: answer.error });
      if (nextAttemptAt) await enqueueDeliveries(queue, [{ id: delivery.id, attempts: attempt, nextAttemptAt }]);
    } finally {
      const left = (inFlight.get(delivery.webhookId) ?? 1) - 1;
      if (left > 0) inFlight.set(delivery.webhookId, left);
      else inFlight.delete(delivery.webhookId);
    }
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
        const { deliveryIds, events } = await fanOutEvents(db, FAN_OUT_BATCH);
        await enqueueDeliveries(queue, deliveryIds.map((id) => ({ id, attempts: 0 })));
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
    onFailed: (job, error) => log.warn('webhook delivery job failed', { id: job.id, attempt: job.attempt, error: error.message }),
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
    },
  };
}

import type { DatabaseHandle } from '../../db/database.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import { dueDeliveries } from '../../db/webhook-deliveries.ts';
import { jobRequestId } from '../observed-job.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { QueueBackend } from '../queue/job-queue.ts';
import { routeJobs } from '../queue/route-jobs.ts';
import { deliveryBatches } from './delivery-batches.ts';
import { DeliveryDispatcher } from './delivery-dispatcher.ts';
import { EventFanOut } from './event-fan-out.ts';
import { RETRY_DELAYS_MS } from './retry-schedule.ts';
import { sendDelivery } from './send-delivery.ts';
import { enqueueDeliveries, WEBHOOK_JOBS, WEBHOOKS_QUEUE } from './webhook-jobs.ts';

/**
 * Requests in flight per engine process, and one account's as of right. The share is small so that
 * accounts whose receivers hang leave most slots to the rest (sixteen of them before another waits);
 * the total is large so that slots nobody else wants can be lent to a busy account whose receiver
 * answers fast (FairLanes): a receiver's throughput is its requests in flight over its answer time.
 */
export const WEBHOOK_CONCURRENCY_DEFAULT = 128;
export const WEBHOOK_ACCOUNT_CONCURRENCY_DEFAULT = 8;

/** One account's requests in flight as of right: as given, else the default, never more than the process's. */
export function accountInFlight(concurrency: number, given?: number): number {
  return Math.min(concurrency, given ?? WEBHOOK_ACCOUNT_CONCURRENCY_DEFAULT);
}

export interface WebhookDeliverySettings {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Deliveries sent at once by this process. */
  concurrency: number;
  /**
   * Deliveries of one account in flight at once in this process as of right (accountInFlight): an
   * account whose receivers are slow keeps the rest of the slots free for other accounts.
   */
  perAccountInFlight?: number;
  /** Deliveries of one webhook in flight at once in this process (at most all of its account's but one). */
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

/**
 * Webhook delivery: fan-out follows the event log (EventFanOut; woken by NOTIFY on PostgreSQL, by its
 * poll everywhere) and turns each committed event into deliveries, claiming for this process what it
 * has room for; retries, manual retries and pings are jobs on a queue of their own (webhook-jobs.ts),
 * apart from the engine's, that claim their delivery; what no process had room for stays due in the
 * database until one claims it, fairly across accounts (DeliveryDispatcher, DeliveryRefill). Each
 * claimed delivery is signed, POSTed, and its attempt recorded with the next retry (sendDelivery).
 * Pending deliveries are put back on the queue at start and by a periodic sweep, so neither a restart
 * of the in-process queue nor a lost job loses one.
 */
export async function startWebhookDelivery(database: DatabaseHandle, backend: QueueBackend, log: Logger, settings: WebhookDeliverySettings): Promise<RunningWebhookDelivery> {
  const { db } = database;
  const queue = backend.queue(WEBHOOKS_QUEUE);
  // Long enough for a request to time out and its answer to be recorded.
  const claimMs = settings.timeoutMs + 30_000;
  const batches = deliveryBatches(db, claimMs);
  const sending = { db, log, queue, batches, settings: { ...settings, retryDelaysMs: settings.retryDelaysMs ?? RETRY_DELAYS_MS } };
  const dispatcher = new DeliveryDispatcher(db, log, batches, {
    concurrency: settings.concurrency,
    perAccount: accountInFlight(settings.concurrency, settings.perAccountInFlight),
    perWebhook: settings.perWebhookInFlight,
    claimMs,
    timeoutMs: settings.timeoutMs,
  }, (delivery, done) => sendDelivery(sending, delivery, done));
  const fanOut = new EventFanOut(db, log, claimMs, dispatcher);

  const sweep = async () => {
    try {
      await enqueueDeliveries(queue, await dueDeliveries(db, settings.sweepMs, 10_000, dispatcher.holdPerAccount));
      // Past each account's share, a backlog is claimed as room frees up.
      dispatcher.moreDue();
    } catch (error) {
      log.warn('webhook sweep failed', { error: (error as Error).message });
    }
  };

  const run = routeJobs(WEBHOOKS_QUEUE, WEBHOOK_JOBS, {
    'webhook-delivery': ({ deliveryId }) => dispatcher.deliver(deliveryId),
  });
  const worker = backend.worker(WEBHOOKS_QUEUE, (job) => run(job, log), {
    concurrency: settings.concurrency,
    onFailed: (job, error) => log.warn('webhook delivery job failed', { jobId: job.id, attempt: job.attempt, requestId: jobRequestId(job), error: error.message }),
  });
  // Everything pending when this process starts, each at its own time.
  await sweep();
  const fanTimer = setInterval(fanOut.wake, settings.fanOutPollMs);
  fanTimer.unref();
  dispatcher.pollRefills(settings.fanOutPollMs);
  const sweepTimer = setInterval(() => void sweep(), settings.sweepMs);
  sweepTimer.unref();
  let notifications: NotificationListener | undefined;
  if (database.listenPool) {
    notifications = listenForNotifications(database.listenPool, 'fleetcore_events', fanOut.wake);
    await notifications.ready;
  }
  fanOut.wake();

  return {
    async close() {
      clearInterval(fanTimer);
      clearInterval(sweepTimer);
      notifications?.close();
      const fanned = fanOut.close();
      const refilled = dispatcher.stopRefills();
      await fanned;
      await refilled;
      await worker.close();
      // Deliveries still waiting here are handed back, for another process to claim at once.
      await dispatcher.close();
    },
  };
}

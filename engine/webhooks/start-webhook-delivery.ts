import type { DatabaseHandle } from '../../db/database.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import {
  claimDeliveries, claimDueDeliveries, dueDeliveries, fanOutEvents, finishAttempt, recordAttempts, releaseDeliveries, type AttemptRecord, type ClaimedDelivery,
} from '../../db/webhook-deliveries.ts';
import { engineMetrics } from '../engine-metrics.ts';
import { jobRequestId } from '../observed-job.ts';
import { FairLanes } from './fair-lanes.ts';
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
  /**
   * Deliveries of one account in flight at once in this process (default a quarter of `concurrency`):
   * an account whose receivers are slow keeps the rest of the slots free for other accounts.
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

const FAN_OUT_BATCH = 1_000;
const RETRY_AFTER_STATUSES = new Set([429, 502, 504]);
/** Deliveries an account may hold in this process (in flight and waiting), in requests it may have in flight. */
const HOLD_PER_SLOT = 4;
/** How often due deliveries left in the database are looked for when no request ending says to. */
const REFILL_POLL_MS = 250;

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
 * everywhere) and turns each committed event into deliveries, claiming for this process what it has
 * room for; retries, manual retries and pings are jobs on a queue of their own, apart from the
 * engine's, that claim their delivery; what no process had room for stays due in the database until
 * one claims it, fairly across accounts (refill). Each claimed delivery is signed, POSTed, and its
 * attempt recorded with the next retry. Pending deliveries are put back on the queue at start and by
 * a periodic sweep, so neither a restart of the in-process queue nor a lost job loses one.
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
   * Fair across accounts (FairLanes): at most `concurrency` requests at once in this process, at most
   * `perAccountInFlight` of one account, and a free slot goes to the account served longest ago. This
   * process holds only a few deliveries per account beyond those in flight: the rest stay due and
   * unclaimed in the database, where whichever process has room claims them, a few per account in turn
   * (refill). So a slow or dead receiver fills its own account's share, never the slots other accounts
   * need, and the engine does not wait for any of it.
   */
  const perAccount = Math.min(settings.concurrency, settings.perAccountInFlight ?? Math.max(1, Math.floor(settings.concurrency / 4)));
  const holdPerAccount = perAccount * HOLD_PER_SLOT;
  const lanes = new FairLanes<ClaimedDelivery>({
    concurrency: settings.concurrency,
    perAccount,
    perWebhook: settings.perWebhookInFlight,
    holdPerAccount,
    holdTotal: settings.concurrency * HOLD_PER_SLOT,
    // A claim that would run out during the request is let go: whoever claims it next sends it, and
    // sending it here too would send it twice.
    maxWaitMs: claimMs - settings.timeoutMs - 5_000,
  });
  const running = new Set<Promise<void>>();
  // Due deliveries may be waiting in the database for room here: set when fan-out left some
  // unclaimed, a delivery was handed back, or the last refill left some.
  let wantRefill = false;
  let refilling: Promise<void> | undefined;
  let refillTimer: NodeJS.Timeout | undefined;
  let refillFailing = false;
  let lastRefill = 0;
  const releases = new StatementBatcher<string, void>(async (ids) => {
    await releaseDeliveries(db, ids);
    return ids.map(() => undefined);
  }, { maxDelayMs: 10, maxItems: 500 });

  /** Hands deliveries back to the database, due and unclaimed, for whichever process has room. */
  function release(deliveries: ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    wantRefill = true;
    for (const d of deliveries) {
      releases.call(d.id).catch((error: Error) => log.warn('webhook delivery release failed; its claim runs out instead', { deliveryId: d.id, error: error.message }));
    }
  }

  /** Queues claimed deliveries in their lanes and starts what may start. */
  function dispatch(deliveries: ClaimedDelivery[]): void {
    for (const d of deliveries) lanes.add(d);
    pump();
  }

  function pump(): void {
    for (let d = lanes.next(); d; d = lanes.next()) start(d);
    release(lanes.takeStale());
  }

  function start(delivery: ClaimedDelivery): void {
    const sending = send(delivery, () => {
      lanes.done(delivery);
      pump();
      // Claimed a batch at a time, not one per request that ends.
      if (wantRefill && (lanes.room(delivery.accountId) >= holdPerAccount / 2 || lanes.waiting === 0)) scheduleRefill();
    }).catch((error: Error) => log.warn('webhook delivery failed', { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.payload.id, error: error.message }));
    running.add(sending);
    void sending.finally(() => running.delete(sending));
  }

  /** A retry, a manual retry, or one the sweep found: claimed here, then sent like a new one if its account has room. */
  async function deliver(job: Job): Promise<void> {
    const delivery = await claims.call(String((job.data as { deliveryId: string }).deliveryId));
    if (!delivery) return;
    if (lanes.room(delivery.accountId) > 0) dispatch([delivery]);
    else release([delivery]);
  }

  function scheduleRefill(delayMs = 10): void {
    if (closed || refillTimer) return;
    refillTimer = setTimeout(() => {
      refillTimer = undefined;
      if (refilling) return scheduleRefill(delayMs);
      refilling = refill().finally(() => (refilling = undefined));
    }, delayMs);
  }
  async function refill(): Promise<void> {
    const rooms = lanes.rooms();
    if (rooms.total === 0) return; // a request ending asks again
    lastRefill = Date.now();
    wantRefill = false;
    try {
      const { deliveries, more } = await claimDueDeliveries(db, { claimMs, limit: rooms.total, rooms });
      if (more) wantRefill = true;
      refillFailing = false;
      if (closed) await releaseDeliveries(db, deliveries.map((d) => d.id));
      else dispatch(deliveries);
    } catch (error) {
      wantRefill = true;
      if (!refillFailing) log.warn('webhook refill failed; retrying', { error: (error as Error).message });
      refillFailing = true;
    }
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
        const { deliveries, events, types, unclaimed } = await fanOutEvents(db, FAN_OUT_BATCH, claimMs, lanes.rooms());
        for (const [type, n] of Object.entries(types)) engineMetrics.events.inc({ type }, n);
        dispatch(deliveries);
        if (unclaimed > 0) {
          wantRefill = true;
          scheduleRefill();
        }
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
      await enqueueDeliveries(queue, await dueDeliveries(db, settings.sweepMs, 10_000, holdPerAccount));
      // Past each account's share, a backlog is claimed as room frees up.
      wantRefill = true;
      scheduleRefill();
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
  const refillPollTimer = setInterval(() => {
    if (wantRefill && Date.now() - lastRefill >= REFILL_POLL_MS) scheduleRefill(0);
  }, Math.min(REFILL_POLL_MS, settings.fanOutPollMs));
  refillPollTimer.unref();
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
      clearInterval(refillPollTimer);
      clearTimeout(refillTimer);
      notifications?.close();
      await fanning;
      await refilling;
      await worker.close();
      // Deliveries still waiting here are handed back, for another process to claim at once.
      await releaseDeliveries(db, lanes.takeWaiting().map((d) => d.id)).catch((error: Error) =>
        log.warn('webhook deliveries not handed back at stop; their claims run out instead', { error: error.message }));
      await Promise.allSettled([...running]);
    },
  };
}

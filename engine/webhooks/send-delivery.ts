import type { Db } from '../../db/database.ts';
import { finishAttempt, type AttemptRecord, type ClaimedDelivery } from '../../db/webhook-deliveries.ts';
import type { Logger } from '../../runtime/logger.ts';
import { engineMetrics } from '../engine-metrics.ts';
import { attemptOutcome } from './attempt-outcome.ts';
import type { DeliveryBatches } from './delivery-batches.ts';
import { enqueueDeliveries, type WebhookQueue } from './webhook-jobs.ts';
import { postWebhook } from './webhook-request.ts';
import { signWebhook } from './webhook-signature.ts';

export interface DeliverySending {
  db: Db;
  log: Logger;
  queue: WebhookQueue;
  batches: DeliveryBatches;
  settings: { timeoutMs: number; allowPrivate: boolean; maxConsecutiveFailures: number; retryDelaysMs: readonly number[] };
}

/**
 * One attempt at a claimed delivery: signed, POSTed, `done` called as soon as the receiver has
 * answered (the slot holds the request only: recording the answer waits for the database, not the
 * receiver), then the attempt recorded with what follows from it (attemptOutcome), and a retry put
 * on the queue for its time.
 */
export async function sendDelivery(deps: DeliverySending, delivery: ClaimedDelivery, done: () => void): Promise<void> {
  const { settings } = deps;
  let answer;
  try {
    const body = JSON.stringify(delivery.payload);
    const headers = signWebhook(delivery.payload.id, Math.floor(Date.now() / 1000), body, delivery.secrets);
    answer = await postWebhook(delivery.url, body, { ...headers }, settings);
  } finally {
    done();
  }
  const attempt = delivery.attempts + 1;
  const { outcome, waitMs } = attemptOutcome(answer, attempt, settings.retryDelaysMs);
  const nextAttemptAt = waitMs === undefined ? undefined : new Date(Date.now() + waitMs);
  engineMetrics.webhookDeliveries.inc({ outcome });
  engineMetrics.webhookSeconds.observe(answer.durationMs / 1000);
  if (outcome === 'succeeded' && delivery.recordedAt) engineMetrics.webhookDelay.observe(Math.max(0, Date.now() - delivery.recordedAt.getTime()) / 1000);
  const record: AttemptRecord = {
    deliveryId: delivery.id, webhookId: delivery.webhookId, attempt, durationMs: answer.durationMs, statusCode: answer.status,
    error: answer.error, outcome, nextAttemptAt, maxConsecutiveFailures: settings.maxConsecutiveFailures,
  };
  const { disabled } = outcome === 'succeeded' || outcome === 'retry' ? (await deps.batches.record.call(record), { disabled: false }) : await finishAttempt(deps.db, record);
  if (disabled) deps.log.warn('webhook disabled', { webhookId: delivery.webhookId, deliveryId: delivery.id, eventId: delivery.payload.id, status: answer.status, error: answer.error });
  if (nextAttemptAt) await enqueueDeliveries(deps.queue, [{ id: delivery.id, attempts: attempt, nextAttemptAt }]);
}

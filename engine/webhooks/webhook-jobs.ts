import { z } from 'zod';
import { queueName, type JobQueue } from '../queue/job-queue.ts';
import type { JobsOf, PayloadsOf } from '../queue/route-jobs.ts';

/**
 * The webhooks queue's jobs (apart from the engine's, so a slow receiver never holds up evaluation),
 * checked as the engine's are (route-jobs.ts).
 */
export const WEBHOOK_JOBS = {
  /** An attempt at a delivery: a retry, a manual retry or ping, or one the sweep found; it claims the delivery first. */
  'webhook-delivery': z.object({ deliveryId: z.string(), requestId: z.string().optional() }),
};

export type WebhookPayloads = PayloadsOf<typeof WEBHOOK_JOBS>;
export type WebhookJob = JobsOf<WebhookPayloads>;
export type WebhookQueue = JobQueue<WebhookJob>;

export const WEBHOOKS_QUEUE = queueName<WebhookJob>('fleetcore-webhooks');

/** Puts deliveries on the webhooks queue; a job id per attempt makes a second add a no-op while the first waits. */
export async function enqueueDeliveries(
  queue: WebhookQueue,
  deliveries: Array<{
    id: string; attempts: number; nextAttemptAt?: Date;
    /** A manual retry: a job of its own. */ again?: number;
    /** The API request that asked for it, for the delivery's log lines. */ requestId?: string;
  }>,
): Promise<void> {
  for (const d of deliveries) {
    const delay = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt.getTime() - Date.now()) : 0;
    const jobId = `delivery-${d.id}-${d.attempts}${d.again === undefined ? '' : `-again-${d.again}`}`;
    await queue.add('webhook-delivery', { deliveryId: d.id, ...(d.requestId ? { requestId: d.requestId } : {}) }, { jobId, delay, attempts: 3 });
  }
}

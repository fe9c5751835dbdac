import type { AttemptRecord } from '../../db/webhook-deliveries.ts';
import { nextRetryDelay, parseRetryAfter } from './retry-schedule.ts';
import type { WebhookAnswer } from './webhook-request.ts';

/** The statuses whose Retry-After is honoured. */
const RETRY_AFTER_STATUSES = new Set([429, 502, 504]);

/**
 * What a receiver's answer to attempt number `attempt` means: a 2xx succeeded; a 410 is gone (the
 * webhook is disabled); anything else, no answer included, is retried after the schedule's next wait
 * (or the receiver's Retry-After when that is longer), or failed when no attempt is left.
 */
export function attemptOutcome(answer: WebhookAnswer, attempt: number, delays: readonly number[]): { outcome: AttemptRecord['outcome']; waitMs?: number } {
  if (answer.status !== undefined && answer.status >= 200 && answer.status < 300) return { outcome: 'succeeded' };
  if (answer.status === 410) return { outcome: 'gone' };
  const retryAfter = answer.status !== undefined && RETRY_AFTER_STATUSES.has(answer.status) ? parseRetryAfter(answer.retryAfter) : undefined;
  const waitMs = nextRetryDelay(attempt, delays, retryAfter);
  return waitMs === undefined ? { outcome: 'failed' } : { outcome: 'retry', waitMs };
}

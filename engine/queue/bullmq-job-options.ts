import type { JobsOptions } from 'bullmq';

/** Attempts of a job whose adder names none (job-queue.ts). */
export const DEFAULT_ATTEMPTS = 5;

/**
 * What every job we put on BullMQ carries, added or made by a schedule: retries at 100 ms, 200 ms,
 * 400 ms…; nothing kept once done, and the last 1,000 failures kept for inspection.
 */
export function bullmqJobOptions(attempts = DEFAULT_ATTEMPTS): JobsOptions {
  return { attempts, backoff: { type: 'exponential', delay: 100 }, removeOnComplete: true, removeOnFail: 1000 };
}

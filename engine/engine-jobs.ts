import { z } from 'zod';
import { queueName, type JobQueue } from './queue/job-queue.ts';
import type { JobsOf, PayloadsOf } from './queue/route-jobs.ts';

/** The API request that queued a job: the job's log lines carry it (observed-job.ts). */
const requestId = z.string().optional();

/**
 * The engine queue's jobs, by name, with the shape of each one's payload: adding a job of another name
 * or payload does not compile, and a job read off the queue that does not match fails at once
 * (route-jobs.ts). A job says only what to look at; its processor reads the rest from the database,
 * so any job may run twice, late, or in any order.
 */
export const ENGINE_JOBS = {
  /**
   * These devices have fixes after their cursors: ingest's signal (one per flush, never one per
   * position, with `committedAt`, when ingest committed them, for the engine's lag), a run that left
   * fixes behind, or the catch-up.
   */
  devices: z.object({ deviceIds: z.array(z.number().int()), committedAt: z.number().optional(), requestId }),
  /** A travel's start, due at its start time. */
  'travel-start': z.object({ travelId: z.number().int(), requestId }),
  /** Repeated: the live ETAs, and the catch-up of travel starts and device signals that were lost. */
  'eta-refresh': z.object({}),
  /** Repeated: devices silent past the threshold become Inactive. */
  'inactivity-sweep': z.object({}),
  /** Repeated: commands past their time to live become expired. */
  'command-expiry': z.object({}),
  /** Repeated: maintenance items whose vehicles reached their thresholds log due and overdue events. */
  'maintenance-check': z.object({}),
  /** Repeated: what the engine has finished with goes, and the position history's partitions are kept. */
  prune: z.object({}),
};

export type EnginePayloads = PayloadsOf<typeof ENGINE_JOBS>;
export type EngineJob = JobsOf<EnginePayloads>;
export type EngineQueue = JobQueue<EngineJob>;

export const ENGINE_QUEUE = queueName<EngineJob>('fleetcore-engine');

/** Schedules a travel's start at its start time (at once when that has passed); adding it twice is a no-op. */
export async function scheduleTravelStart(queue: EngineQueue, travelId: number, startTime: Date, requestId?: string): Promise<void> {
  await queue.add('travel-start', { travelId, ...(requestId ? { requestId } : {}) }, { jobId: `travel-start-${travelId}`, delay: Math.max(0, startTime.getTime() - Date.now()) });
}

export async function unscheduleTravelStart(queue: EngineQueue, travelId: number): Promise<void> {
  await queue.remove(`travel-start-${travelId}`);
}

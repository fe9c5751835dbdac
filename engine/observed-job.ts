import type { Logger } from '../runtime/logger.ts';
import { engineMetrics, type EngineLag } from './engine-metrics.ts';
import type { Job, JobProcessor } from './queue/job-queue.ts';

/** Job data fields that tie a job to what caused it: the API request that queued it, the commit that signalled it. */
interface JobOrigin {
  requestId?: string;
  committedAt?: number;
}

/**
 * Read from the job as it came off the queue, before its payload is checked (route-jobs.ts), so that
 * even a job that fails the check is logged and measured with what it carries.
 */
function jobOrigin(data: unknown): JobOrigin {
  if (typeof data !== 'object' || data === null) return {};
  return {
    requestId: 'requestId' in data && typeof data.requestId === 'string' ? data.requestId : undefined,
    committedAt: 'committedAt' in data && typeof data.committedAt === 'number' ? data.committedAt : undefined,
  };
}

/** The request id a job's log lines carry: the API request's that queued it, else one of the job's own. */
export function jobRequestId(job: Job): string {
  return jobOrigin(job.data).requestId ?? `job-${job.id}`;
}

/**
 * Runs an engine job with what an operator needs to follow it: a logger whose lines carry the job's
 * name, id, attempt and a request id (the API request's that queued it, or one of its own), its
 * duration and outcome in the metrics, and for a `devices` signal the engine's lag.
 */
export function observedJob(log: Logger, lag: EngineLag, run: (job: Job, log: Logger) => Promise<void>): JobProcessor {
  return async (job) => {
    const origin = jobOrigin(job.data);
    const jobLog = log.child({ job: job.name, jobId: job.id, attempt: job.attempt, requestId: jobRequestId(job) });
    const finished = origin.committedAt === undefined ? undefined : lag.started(origin.committedAt);
    const timer = engineMetrics.jobSeconds.startTimer({ name: job.name });
    try {
      await run(job, jobLog);
      engineMetrics.jobs.inc({ name: job.name, outcome: 'completed' });
      finished?.(true);
    } catch (error) {
      engineMetrics.jobs.inc({ name: job.name, outcome: 'failed' });
      finished?.(false);
      jobLog.debug('engine job attempt failed', { error: (error as Error).message });
      throw error;
    } finally {
      timer();
    }
  };
}

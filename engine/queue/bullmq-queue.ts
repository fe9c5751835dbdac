import type { Queue } from 'bullmq';
import { toBullmqId } from './bullmq-job-id.ts';
import { bullmqJobOptions } from './bullmq-job-options.ts';
import type { BullmqSchedules } from './bullmq-schedules.ts';
import type { JobOptions, QueueCounts, UntypedQueue } from './job-queue.ts';

/** A queue handle over a BullMQ Queue: our ids escaped, our retry options on every job, schedules kept by `schedules`. */
export class BullmqQueue implements UntypedQueue {
  constructor(
    readonly name: string,
    private readonly bull: Queue,
    private readonly schedules: BullmqSchedules,
    private readonly onClose: () => void,
  ) {}

  async add(jobName: string, data: unknown, options: JobOptions = {}): Promise<void> {
    const jobId = options.jobId === undefined ? undefined : toBullmqId(options.jobId);
    // BullMQ keeps failed jobs (removeOnFail), and a kept job blocks its id; ours must not outlive its run.
    if (jobId !== undefined) {
      const previous = await this.bull.getJob(jobId);
      if (previous && (await previous.isFailed())) await previous.remove();
    }
    await this.bull.add(jobName, data, { ...bullmqJobOptions(options.attempts), delay: options.delay, jobId });
  }

  async remove(jobId: string): Promise<void> {
    // 0 when the job is locked (active): left alone, as the contract says.
    await this.bull.remove(toBullmqId(jobId));
  }

  async repeat(jobName: string, everyMs: number, data?: unknown): Promise<void> {
    if (!(everyMs > 0)) throw new Error(`repeat('${jobName}') needs everyMs > 0, got ${everyMs}.`);
    await this.schedules.make(this.name, this.bull, jobName, everyMs, data);
  }

  async counts(): Promise<QueueCounts> {
    const counts = await this.bull.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
    return { waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0), active: counts.active ?? 0, delayed: counts.delayed ?? 0, failed: counts.failed ?? 0 };
  }

  async close(): Promise<void> {
    this.onClose();
    this.schedules.forget(this.name);
    await this.bull.close();
  }

  /** The backend closes: the Queue goes, whoever holds this handle. */
  closeQueue(): Promise<void> {
    return this.bull.close();
  }
}

import type { Queue } from 'bullmq';
import type { RedisClient } from '../../runtime/redis-client.ts';
import { toBullmqId } from './bullmq-job-id.ts';
import { bullmqJobOptions } from './bullmq-job-options.ts';

interface Schedule {
  queueName: string;
  bull: Queue;
  jobName: string;
  everyMs: number;
  data: unknown;
}

/**
 * The schedules this process made with repeat(), kept alive. Redis can come back without its data
 * (restarted without persistence, a failover to an empty replica, a FLUSHALL): the jobs go, and with
 * them the schedules, which nothing would make again until the process restarts. So they are checked
 * every `checkMs` and made again when missing, as a process starting would; the engine's own
 * schedules (the ETA refresh's catch-up) then rebuild the lost jobs from the database.
 */
export class BullmqSchedules {
  private readonly made = new Map<string, Schedule>();
  private keeper: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    /** The queues' connection: while it is not ready, checks wait for the next round. */
    private readonly connection: RedisClient,
    private readonly checkMs: number,
    private readonly onRestored?: (queue: string, jobName: string) => void,
  ) {}

  async make(queueName: string, bull: Queue, jobName: string, everyMs: number, data: unknown): Promise<void> {
    await upsert(bull, jobName, everyMs, data);
    this.made.set(`${queueName}\u0000${jobName}`, { queueName, bull, jobName, everyMs, data });
    if (!this.keeper) {
      this.keeper = setInterval(() => void this.check(), this.checkMs);
      this.keeper.unref();
    }
  }

  /** Stops keeping a closed queue's schedules (they stay in Redis for the processes still running). */
  forget(queueName: string): void {
    for (const [key, s] of this.made) if (s.queueName === queueName) this.made.delete(key);
  }

  close(): void {
    clearInterval(this.keeper);
    this.made.clear();
  }

  /** Makes again the schedules Redis no longer has; while Redis is unreachable, waits for the next check. */
  private async check(): Promise<void> {
    if (this.checking || this.connection.status !== 'ready') return;
    this.checking = true;
    try {
      for (const s of [...this.made.values()]) {
        if (await s.bull.getJobScheduler(toBullmqId(s.jobName))) continue;
        await upsert(s.bull, s.jobName, s.everyMs, s.data);
        this.onRestored?.(s.queueName, s.jobName);
      }
    } catch {
      // Redis went away again: the next check retries.
    } finally {
      this.checking = false;
    }
  }
}

async function upsert(bull: Queue, jobName: string, everyMs: number, data: unknown): Promise<void> {
  // A job scheduler is one Redis record per id: every process upserting it keeps one schedule.
  await bull.upsertJobScheduler(toBullmqId(jobName), { every: everyMs }, { name: jobName, data: data ?? {}, opts: bullmqJobOptions() });
}

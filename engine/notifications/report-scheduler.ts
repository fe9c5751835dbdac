import type { Db } from '../../db/database.ts';
import { scheduleDueReports } from '../../db/report-runs.ts';
import { CoalescedRun } from '../../runtime/coalesced-run.ts';
import type { Logger } from '../../runtime/logger.ts';

/** Subscriptions scheduled per transaction; a full batch means more may be due at once. */
const BATCH = 200;

export interface ReportSchedulerOptions {
  /** How often due subscriptions are looked for (REPORT_CHECK_S). */
  everyMs: number;
  /** Called after a check that made deliveries: the sender has email to send. */
  onScheduled: () => void;
  /** Subscriptions per transaction; default 200. */
  batch?: number;
}

export interface RunningReportScheduler {
  /** Looks for due subscriptions now (tests, and a subscription just made due). */
  check(): void;
  close(): Promise<void>;
}

/**
 * Turns due report subscriptions into deliveries (db/report-runs.ts) at start and every `everyMs`,
 * one check at a time: a check still running when the timer fires is followed by one more, not
 * overlapped. A check that fails is logged once until one succeeds, and tried again at the next tick.
 * Several processes may run this at once: each subscription's run is taken by one of them.
 */
export function startReportScheduler(db: Db, log: Logger, options: ReportSchedulerOptions): RunningReportScheduler {
  const batch = options.batch ?? BATCH;
  const run = new CoalescedRun(
    async () => {
      let made = 0;
      for (;;) {
        const before = made;
        made += await scheduleDueReports(db, { limit: batch });
        // Fewer than a batch made: nothing more is due, or only rows another process holds.
        if (made - before < batch) break;
      }
      if (made > 0) {
        log.debug('scheduled report deliveries made', { deliveries: made });
        options.onScheduled();
      }
    },
    {
      failed: (error) => log.warn('scheduling report emails failed; retrying', { error: error.message }),
      recovered: () => log.info('scheduling report emails works again'),
    },
  );
  const timer = setInterval(run.request, options.everyMs);
  timer.unref();
  run.request();
  return {
    check: run.request,
    async close() {
      clearInterval(timer);
      await run.close();
    },
  };
}

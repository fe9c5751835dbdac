import { sql } from 'kysely';
import { latestReportRun, nextReportRun, reportPeriod, type ReportTiming } from '../domain/notifications/report-schedule.ts';
import { inTransaction, type Db } from './database.ts';

export interface ScheduleDueReportsOptions {
  /** The time to schedule at; default the clock's. */
  now?: Date;
  /** Subscriptions taken per call at most; the rest wait for the next call. */
  limit: number;
}

interface DueRow {
  id: number;
  account_id: number;
  user_id: number;
  frequency: 'daily' | 'weekly';
  local_time: string;
  weekday: number | null;
  timezone: string;
  next_run_at: Date;
  removed: boolean;
}

/** A subscription whose timing cannot be computed (a timezone the runtime no longer knows) is tried again a day later. */
const RETRY_BROKEN_TIMING_MS = 86_400_000;

/**
 * Turns the enabled report subscriptions that are due into deliveries: one email delivery each, for
 * the period its run reports on, and moves each one's next run on, in one transaction. Rows another
 * process is scheduling are skipped (FOR UPDATE SKIP LOCKED), and a period already delivered is not
 * delivered again (the unique report-and-period index), so two processes never send one twice.
 *
 * The run is the latest one due, not the first missed: a server that was down for days sends the
 * period just before now, once, and none of those before it. A subscription of a removed user makes
 * no delivery; its next run moves on all the same, so it does not stay due. Answers how many
 * deliveries were made.
 */
export async function scheduleDueReports(db: Db, { now = new Date(), limit }: ScheduleDueReportsOptions): Promise<number> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<DueRow>`
      SELECT r.id, r.account_id, r.user_id, r.frequency, r.local_time, r.weekday, r.timezone, r.next_run_at,
        u.removed_at IS NOT NULL AS removed
      FROM report_subscriptions r JOIN users u ON u.id = r.user_id
      WHERE r.enabled AND r.next_run_at <= ${now}
      ORDER BY r.next_run_at, r.id
      LIMIT ${limit}
      FOR UPDATE OF r SKIP LOCKED
    `.execute(trx);
    let made = 0;
    for (const r of rows) {
      const timing: ReportTiming = { frequency: r.frequency, localTime: r.local_time, weekday: r.weekday, timezone: r.timezone };
      let runAt: Date;
      let nextRunAt: Date;
      try {
        // A next_run_at off the schedule (set by hand, or before the timing changed) is a run of its own.
        const latest = latestReportRun(timing, now);
        runAt = latest > r.next_run_at ? latest : r.next_run_at;
        nextRunAt = nextReportRun(timing, now > r.next_run_at ? now : r.next_run_at);
      } catch {
        await trx.updateTable('report_subscriptions').set({ next_run_at: new Date(now.getTime() + RETRY_BROKEN_TIMING_MS) }).where('id', '=', r.id).execute();
        continue;
      }
      if (!r.removed) {
        const period = reportPeriod(timing, runAt);
        const inserted = await trx
          .insertInto('notification_deliveries')
          .values({
            account_id: r.account_id, report_subscription_id: r.id, user_id: r.user_id, channel: 'email',
            period_start: period.start, period_end: period.end,
          })
          .onConflict((oc) => oc.columns(['report_subscription_id', 'period_start']).where('report_subscription_id', 'is not', null).doNothing())
          .returning('id')
          .executeTakeFirst();
        if (inserted) made++;
      }
      await trx
        .updateTable('report_subscriptions')
        .set(r.removed ? { next_run_at: nextRunAt } : { next_run_at: nextRunAt, last_run_at: runAt })
        .where('id', '=', r.id)
        .execute();
    }
    return made;
  });
}

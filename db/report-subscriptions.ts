import { sql, type Selectable } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { ReportSubscriptionsTable } from './schema.ts';

// A user's own scheduled summaries, per mode (a summary reports the vehicles of its mode), changed
// only by the user. The scheduler (db/report-runs.ts) advances next_run_at as it sends each one.

/** The first key of the advisory lock that makes a user's subscriptions take turns (the second is the user id). */
const REPORT_LIMIT_LOCK = 0x727074;

export type ReportSubscriptionRow = Selectable<ReportSubscriptionsTable>;

export interface ReportSubscriptionFields {
  frequency: 'daily' | 'weekly';
  reports: string[];
  localTime: string;
  weekday: number | null;
  timezone: string;
  enabled: boolean;
  nextRunAt: Date;
}

function columns(s: Partial<ReportSubscriptionFields>) {
  return {
    ...(s.frequency !== undefined ? { frequency: s.frequency } : {}),
    ...(s.reports !== undefined ? { reports: s.reports } : {}),
    ...(s.localTime !== undefined ? { local_time: s.localTime } : {}),
    ...(s.weekday !== undefined ? { weekday: s.weekday } : {}),
    ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
    ...(s.enabled !== undefined ? { enabled: s.enabled } : {}),
    ...(s.nextRunAt !== undefined ? { next_run_at: s.nextRunAt } : {}),
  };
}

/**
 * Adds a subscription unless the user already has `limit` (undefined then), in both modes together.
 * Call it in a transaction: a user's additions take turns on a lock held until the commit.
 */
export async function insertReportSubscription(db: Db, scope: AccessScope, s: ReportSubscriptionFields, limit: number): Promise<ReportSubscriptionRow | undefined> {
  await sql`SELECT pg_advisory_xact_lock(${REPORT_LIMIT_LOCK}::int, ${scope.userId}::int)`.execute(db);
  const { n } = await db.selectFrom('report_subscriptions').select(sql<number>`count(*)::int`.as('n')).where('user_id', '=', scope.userId).executeTakeFirstOrThrow();
  if (n >= limit) return undefined;
  return db
    .insertInto('report_subscriptions')
    .values({
      account_id: scope.accountId, user_id: scope.userId, mode: scope.mode, frequency: s.frequency, reports: s.reports, local_time: s.localTime,
      weekday: s.weekday, timezone: s.timezone, enabled: s.enabled, next_run_at: s.nextRunAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The user's subscriptions of the scope's mode, oldest first. */
export async function reportSubscriptionsOf(db: Db, scope: AccessScope): Promise<ReportSubscriptionRow[]> {
  return db.selectFrom('report_subscriptions').selectAll()
    .where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode)
    .orderBy('id').execute();
}

export async function findReportSubscription(db: Db, scope: AccessScope, id: number): Promise<ReportSubscriptionRow | undefined> {
  return db.selectFrom('report_subscriptions').selectAll()
    .where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id)
    .executeTakeFirst();
}

export async function updateReportSubscription(db: Db, scope: AccessScope, id: number, changes: Partial<ReportSubscriptionFields>): Promise<ReportSubscriptionRow | undefined> {
  return db.updateTable('report_subscriptions').set({ ...columns(changes), updated_at: new Date() })
    .where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id)
    .returningAll().executeTakeFirst();
}

export async function deleteReportSubscription(db: Db, scope: AccessScope, id: number): Promise<boolean> {
  const result = await db.deleteFrom('report_subscriptions')
    .where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

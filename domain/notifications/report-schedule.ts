import { DomainError } from '../domain-error.ts';
import { wallClockAt, wallClockToInstant } from '../time/zoned-time.ts';
import { minutesOfDay } from './notification-schedule.ts';

/** The reports a scheduled summary can carry, each sent as one CSV attachment. */
export const REPORT_KINDS = ['trips', 'geofences', 'maintenance'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

export function isReportKind(value: string): value is ReportKind {
  return (REPORT_KINDS as readonly string[]).includes(value);
}

/**
 * When a summary is sent: every day, or every week on an ISO `weekday` (1 = Monday … 7 = Sunday),
 * at `localTime` (`HH:mm`) in `timezone`. `weekday` is null for a daily one.
 */
export interface ReportTiming {
  frequency: 'daily' | 'weekly';
  localTime: string;
  weekday: number | null;
  timezone: string;
}

interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** The civil date `days` after `date`, by the calendar (UTC arithmetic has no DST). */
function addDays(date: CivilDate, days: number): CivilDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function isoWeekday(date: CivilDate): number {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  return d === 0 ? 7 : d;
}

function localDate(instant: Date, timeZone: string): CivilDate {
  const { year, month, day } = wallClockAt(instant.getTime(), timeZone);
  return { year, month, day };
}

/** The instant of `minutes` past midnight on a local date. */
function runOn(date: CivilDate, minutes: number, timeZone: string): Date {
  return wallClockToInstant({ ...date, hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0 }, timeZone);
}

function checkedWeekday(t: ReportTiming): number | null {
  if (t.frequency === 'daily') return null;
  if (t.weekday === null || !Number.isInteger(t.weekday) || t.weekday < 1 || t.weekday > 7) {
    throw new DomainError('invalid', 'a weekly report needs a weekday (1 = Monday … 7 = Sunday)');
  }
  return t.weekday;
}

/**
 * The first run strictly after `after`: `localTime` on the next matching local day. Computed from the
 * wall clock, not by adding 24 hours, so a run stays at its local time across DST changes. A local
 * time the clocks skip runs at the instant wallClockToInstant reads it as (just after the gap); a
 * local time that happens twice runs once, at the earlier instant.
 */
export function nextReportRun(t: ReportTiming, after: Date): Date {
  const minutes = minutesOfDay(t.localTime);
  const weekday = checkedWeekday(t);
  const afterMs = after.getTime();
  // From the day before the local date of `after` (a zone that skips a whole day can put a run's
  // instant on either side of it) through eight days on, which holds every weekday once.
  const today = localDate(after, t.timezone);
  for (let offset = -1; offset <= 8; offset++) {
    const date = addDays(today, offset);
    if (weekday !== null && isoWeekday(date) !== weekday) continue;
    const run = runOn(date, minutes, t.timezone);
    if (run.getTime() > afterMs) return run;
  }
  // Unreachable for real zones: eight consecutive days always hold a matching one.
  throw new Error(`no report run found after ${after.toISOString()} in ${t.timezone}`);
}

/**
 * The latest run at or before `atOrBefore`: where a server that was down for days takes up the
 * schedule, so it sends the period just missed rather than each missed one in turn.
 */
export function latestReportRun(t: ReportTiming, atOrBefore: Date): Date {
  const minutes = minutesOfDay(t.localTime);
  const weekday = checkedWeekday(t);
  const limitMs = atOrBefore.getTime();
  const today = localDate(atOrBefore, t.timezone);
  for (let offset = 1; offset >= -8; offset--) {
    const date = addDays(today, offset);
    if (weekday !== null && isoWeekday(date) !== weekday) continue;
    const run = runOn(date, minutes, t.timezone);
    if (run.getTime() <= limitMs) return run;
  }
  throw new Error(`no report run found before ${atOrBefore.toISOString()} in ${t.timezone}`);
}

function startOfLocalDay(date: CivilDate, timeZone: string): Date {
  return wallClockToInstant({ ...date, hour: 0, minute: 0, second: 0 }, timeZone);
}

/**
 * What the run at `runAt` reports on, as [start, end): a daily run the whole local day before its
 * own local day, a weekly run the seven local days before it. Local midnights, so a period holding a
 * DST change is 23 or 25 hours long (a week 167 or 169).
 */
export function reportPeriod(t: ReportTiming, runAt: Date): { start: Date; end: Date } {
  const runDay = localDate(runAt, t.timezone);
  const days = t.frequency === 'weekly' ? 7 : 1;
  return { start: startOfLocalDay(addDays(runDay, -days), t.timezone), end: startOfLocalDay(runDay, t.timezone) };
}

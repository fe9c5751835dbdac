import { DomainError } from '../domain-error.ts';
import { wallClockAt } from '../time/zoned-time.ts';

/**
 * When a rule notifies: on these ISO weekdays (1 = Monday … 7 = Sunday), between `from` and `to`
 * (`HH:mm`, local to the rule's timezone). A window whose `to` is not after its `from` runs past
 * midnight (`22:00`–`06:00`: nights), and belongs to the day it opens on: Friday's night runs into
 * Saturday morning. `from` equal to `to` is the whole day.
 */
export interface NotificationSchedule {
  days: number[];
  from: string;
  to: string;
}

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

export class NotificationScheduleError extends DomainError {
  override name = 'NotificationScheduleError';
  constructor(message: string) {
    super('invalid', message);
  }
}

export function minutesOfDay(hhmm: string): number {
  const m = HH_MM.exec(hhmm);
  if (!m) throw new NotificationScheduleError(`"${hhmm}" is not a time of day as HH:mm (00:00 to 23:59)`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** The schedule as stored: days sorted without repeats, times checked. */
export function normaliseSchedule(schedule: NotificationSchedule): NotificationSchedule {
  if (!Array.isArray(schedule.days) || schedule.days.length === 0) throw new NotificationScheduleError('days needs at least one ISO weekday (1 = Monday … 7 = Sunday)');
  for (const d of schedule.days) {
    if (!Number.isInteger(d) || d < 1 || d > 7) throw new NotificationScheduleError(`${d} is not an ISO weekday (1 = Monday … 7 = Sunday)`);
  }
  minutesOfDay(schedule.from);
  minutesOfDay(schedule.to);
  return { days: [...new Set(schedule.days)].sort((a, b) => a - b), from: schedule.from, to: schedule.to };
}

/** ISO weekday of a civil date. */
function isoWeekday(year: number, month: number, day: number): number {
  const d = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  return d === 0 ? 7 : d;
}

/** Whether `at` falls inside the schedule, read in `timeZone`. */
export function inSchedule(schedule: NotificationSchedule, at: Date, timeZone: string): boolean {
  const clock = wallClockAt(at.getTime(), timeZone);
  const now = clock.hour * 60 + clock.minute;
  const from = minutesOfDay(schedule.from);
  const to = minutesOfDay(schedule.to);
  const today = isoWeekday(clock.year, clock.month, clock.day);
  if (from === to) return schedule.days.includes(today);
  if (from < to) return now >= from && now < to && schedule.days.includes(today);
  // Past midnight: the evening part is today's window, the morning part yesterday's.
  if (now >= from) return schedule.days.includes(today);
  if (now < to) return schedule.days.includes(today === 1 ? 7 : today - 1);
  return false;
}

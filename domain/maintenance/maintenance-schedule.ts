/**
 * When a vehicle's maintenance item is due (docs/api/maintenance.md): the pure rules the API's
 * answers, the fleet report and the engine's check all read, so they never disagree.
 *
 * An item counts by the vehicle's odometer (km), its engine hours, or the calendar (days). Its next
 * threshold (`nextDue`) is a reading for the first two and a date (`YYYY-MM-DD`, UTC days) for the
 * calendar. At the threshold the item is `due`; `tolerance` further on (km, hours or days) it is
 * `overdue`; within the asker's window before it, `dueSoon`.
 */

export const MAINTENANCE_KINDS = ['odometer', 'engineHours', 'calendar'] as const;
export type MaintenanceKind = (typeof MAINTENANCE_KINDS)[number];

export const MAINTENANCE_STATUSES = ['unknown', 'ok', 'dueSoon', 'due', 'overdue'] as const;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number];

/** The unit of an item's interval, tolerance and remaining figure. */
export const MAINTENANCE_UNITS: Record<MaintenanceKind, 'km' | 'h' | 'days'> = { odometer: 'km', engineHours: 'h', calendar: 'days' };

/** A tolerance not given is this share of the interval (calendar items: whole days, rounded up). */
export const DEFAULT_TOLERANCE_SHARE = 0.1;

/** The windows before a threshold in which an item is `dueSoon`, when the asker gives none. */
export const DEFAULT_DUE_SOON = { km: 1000, hours: 50, days: 14 } as const;

export interface DueSoonWindow {
  km: number;
  hours: number;
  days: number;
}

/** A threshold: km or hours, or a calendar date. */
export type Threshold = number | string;

export interface ScheduledItem {
  kind: MaintenanceKind;
  interval: number;
  tolerance: number;
  /** km or hours for odometer and engine-hours items, `YYYY-MM-DD` for calendar items. */
  nextDue: Threshold;
}

/**
 * The vehicle's reading an item is compared with: km or hours as GET /vehicles/{id}/accumulators
 * reports them (null before there is any), or today's date (UTC) for calendar items.
 */
export type Reading = number | string | null;

const DAY_MS = 86_400_000;
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** `YYYY-MM-DD` of an instant, in UTC: the calendar the items count by. */
export const utcDate = (at: Date) => at.toISOString().slice(0, 10);

/** A date plus whole days. */
export const addDays = (date: string, days: number) => dateOf(dayNumber(date) + days);

/** Whether text is a real calendar date written `YYYY-MM-DD`. */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === text;
}

export function defaultTolerance(kind: MaintenanceKind, interval: number): number {
  const share = interval * DEFAULT_TOLERANCE_SHARE;
  return kind === 'calendar' ? Math.ceil(share) : Math.round(share * 100) / 100;
}

/**
 * The threshold after `from` (the reading or date the interval counts from: the last service, or the
 * vehicle as it is when the item is made): one interval on. A service done sets the next the same way.
 */
export function nextThreshold(kind: MaintenanceKind, interval: number, from: number | string): Threshold {
  if (kind === 'calendar') return addDays(String(from), interval);
  return Math.round((Number(from) + interval) * 100) / 100;
}

/** Names a threshold in event dedupe keys and in the item's record of what was logged. */
export const thresholdKey = (t: Threshold) => String(t);

/**
 * What is left before the threshold: km or hours (to 0.1 km, 0.01 h), or whole days; negative once
 * past it; null without a reading.
 */
export function remaining(item: ScheduledItem, reading: Reading): number | null {
  if (reading === null) return null;
  if (item.kind === 'calendar') return dayNumber(String(item.nextDue)) - dayNumber(String(reading));
  const left = Number(item.nextDue) - Number(reading);
  return item.kind === 'odometer' ? Math.round(left * 10) / 10 : Math.round(left * 100) / 100;
}

/** The window of an item's kind. */
export const windowFor = (kind: MaintenanceKind, within: DueSoonWindow) => (kind === 'odometer' ? within.km : kind === 'engineHours' ? within.hours : within.days);

/**
 * - `unknown`: no reading yet (a vehicle that never reported, for odometer and engine-hours items);
 * - `overdue`: at or past the threshold plus the tolerance;
 * - `due`: at or past the threshold;
 * - `dueSoon`: within the window before it;
 * - `ok`: otherwise.
 */
export function maintenanceStatus(item: ScheduledItem, reading: Reading, within: DueSoonWindow = DEFAULT_DUE_SOON): MaintenanceStatus {
  const left = remaining(item, reading);
  if (left === null) return 'unknown';
  if (left <= -item.tolerance) return 'overdue';
  if (left <= 0) return 'due';
  if (left <= windowFor(item.kind, within)) return 'dueSoon';
  return 'ok';
}

export interface LoggedAlerts {
  /** The threshold whose `due` event was logged, if any. */
  dueLogged: string | null;
  overdueLogged: string | null;
}

/**
 * The events the engine's check logs for an item now: `due` once per threshold reached, `overdue`
 * once per threshold passed by the tolerance (with `due` first, if that was never logged).
 */
export function alertsToLog(item: ScheduledItem & LoggedAlerts, reading: Reading): Array<'due' | 'overdue'> {
  const status = maintenanceStatus(item, reading);
  const key = thresholdKey(item.nextDue);
  const alerts: Array<'due' | 'overdue'> = [];
  if ((status === 'due' || status === 'overdue') && item.dueLogged !== key) alerts.push('due');
  if (status === 'overdue' && item.overdueLogged !== key) alerts.push('overdue');
  return alerts;
}

/**
 * The reading an item of `kind` is compared with, as GET /vehicles/{id}/accumulators shows the
 * vehicle's figures (km to 0.1, hours to 0.01), or today's date (UTC) for calendar items.
 */
export function currentReading(kind: MaintenanceKind, vehicle: { odometerKm: number | null; engineHours: number | null }, now: Date): Reading {
  if (kind === 'calendar') return utcDate(now);
  const value = kind === 'odometer' ? vehicle.odometerKm : vehicle.engineHours;
  if (value === null) return null;
  return kind === 'odometer' ? Math.round(value * 10) / 10 : Math.round(value * 100) / 100;
}

import { describe, expect, it } from 'vitest';
import {
  addDays, alertsToLog, currentReading, defaultTolerance, isCalendarDate, maintenanceStatus, nextThreshold, remaining, type ScheduledItem,
} from './maintenance-schedule.ts';
import { maintenanceEvent } from '../events/event-payloads.ts';

const oil: ScheduledItem = { kind: 'odometer', interval: 10_000, tolerance: 1_000, nextDue: 130_000 };
const service: ScheduledItem = { kind: 'engineHours', interval: 500, tolerance: 50, nextDue: 4_000 };
const inspection: ScheduledItem = { kind: 'calendar', interval: 180, tolerance: 18, nextDue: '2026-07-14' };
const window = { km: 1_000, hours: 50, days: 14 };

describe('maintenanceStatus', () => {
  it.each([
    [oil, null, 'unknown'],
    [oil, 120_000, 'ok'],
    [oil, 128_999.9, 'ok'],
    [oil, 129_000, 'dueSoon'],
    [oil, 129_999.9, 'dueSoon'],
    [oil, 130_000, 'due'],
    [oil, 130_999.9, 'due'],
    [oil, 131_000, 'overdue'],
    [service, 3_949.99, 'ok'],
    [service, 3_950, 'dueSoon'],
    [service, 4_000, 'due'],
    [service, 4_050, 'overdue'],
    [inspection, '2026-06-29', 'ok'],
    [inspection, '2026-06-30', 'dueSoon'],
    [inspection, '2026-07-14', 'due'],
    [inspection, '2026-07-31', 'due'],
    [inspection, '2026-08-01', 'overdue'],
  ] as const)('%o at %s is %s', (item, reading, status) => {
    expect(maintenanceStatus(item, reading, window)).toBe(status);
  });

  it('takes the asker\'s window for dueSoon', () => {
    expect(maintenanceStatus(oil, 125_000, { ...window, km: 5_000 })).toBe('dueSoon');
    expect(maintenanceStatus(oil, 125_000, { ...window, km: 4_999 })).toBe('ok');
  });
});

describe('remaining', () => {
  it('is km to 0.1, hours to 0.01, whole days, negative once past', () => {
    expect(remaining(oil, 129_876.54)).toBe(123.5);
    expect(remaining(service, 4_010.123)).toBe(-10.12);
    expect(remaining(inspection, '2026-07-20')).toBe(-6);
    expect(remaining(inspection, '2025-12-31')).toBe(195);
  });
});

describe('nextThreshold', () => {
  it('is one interval after the reading or date it counts from', () => {
    expect(nextThreshold('odometer', 10_000, 120_000)).toBe(130_000);
    expect(nextThreshold('engineHours', 500, 3_512.257)).toBe(4_012.26);
    expect(nextThreshold('calendar', 180, '2026-01-15')).toBe('2026-07-14');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
  });

  it('defaults the tolerance to a tenth of the interval, whole days for the calendar', () => {
    expect(defaultTolerance('odometer', 10_000)).toBe(1_000);
    expect(defaultTolerance('engineHours', 250)).toBe(25);
    expect(defaultTolerance('calendar', 180)).toBe(18);
    expect(defaultTolerance('calendar', 7)).toBe(1);
  });

  it('knows a calendar date from text that only looks like one', () => {
    expect(isCalendarDate('2026-01-15')).toBe(true);
    expect(isCalendarDate('2026-02-30')).toBe(false);
    expect(isCalendarDate('2026-1-5')).toBe(false);
  });
});

describe('alertsToLog', () => {
  const fresh = { ...oil, dueLogged: null, overdueLogged: null };

  it('logs due once per threshold reached, then overdue once past the tolerance', () => {
    expect(alertsToLog(fresh, 129_999)).toEqual([]);
    expect(alertsToLog(fresh, 130_000)).toEqual(['due']);
    expect(alertsToLog({ ...fresh, dueLogged: '130000' }, 130_500)).toEqual([]);
    expect(alertsToLog({ ...fresh, dueLogged: '130000' }, 131_000)).toEqual(['overdue']);
    expect(alertsToLog({ ...fresh, dueLogged: '130000', overdueLogged: '130000' }, 140_000)).toEqual([]);
  });

  it('logs both at once for a vehicle found already past the tolerance', () => {
    expect(alertsToLog(fresh, 135_000)).toEqual(['due', 'overdue']);
  });

  it('logs again for a new threshold (after a service), not for the old one', () => {
    const moved = { ...oil, nextDue: 141_000, dueLogged: '130000', overdueLogged: '130000' };
    expect(alertsToLog(moved, 131_000)).toEqual([]);
    expect(alertsToLog(moved, 141_000)).toEqual(['due']);
  });

  it('logs nothing without a reading', () => {
    expect(alertsToLog(fresh, null)).toEqual([]);
  });
});

describe('maintenanceEvent', () => {
  const item = { id: 31, deviceId: 7, name: 'Oil change', kind: 'odometer' as const, interval: 10_000, tolerance: 1_000, nextDue: 130_000, current: 130_004.2 };
  const at = new Date('2026-05-01T14:30:41Z');

  it('names the event by item, threshold and kind of alert, whatever the reading or time', () => {
    const due = maintenanceEvent('due', item, at, null);
    expect(due).toMatchObject({
      type: 'vehicle.maintenance.due', occurredAt: at, deviceId: 7, position: null, dedupeKey: 'maintenance:31:130000:due',
      data: { maintenance: { id: 31, name: 'Oil change', kind: 'odometer', unit: 'km', interval: 10_000, tolerance: 1_000, nextDue: 130_000, current: 130_004.2 } },
    });
    expect(maintenanceEvent('due', { ...item, current: 130_050 }, new Date(), null).dedupeKey).toBe(due.dedupeKey);
    expect(maintenanceEvent('overdue', item, at, null).dedupeKey).toBe('maintenance:31:130000:overdue');
    expect(maintenanceEvent('due', { ...item, nextDue: 140_000 }, at, null).dedupeKey).toBe('maintenance:31:140000:due');
    expect(maintenanceEvent('due', { ...item, kind: 'calendar', nextDue: '2026-07-14', current: '2026-07-14' }, at, null))
      .toMatchObject({ dedupeKey: 'maintenance:31:2026-07-14:due', data: { maintenance: { unit: 'days', nextDue: '2026-07-14' } } });
  });
});

describe('currentReading', () => {
  it('is the vehicle\'s figure as GET /vehicles/{id}/accumulators rounds it, or today (UTC)', () => {
    const vehicle = { odometerKm: 129_999.96, engineHours: 499.996 };
    const now = new Date('2026-07-13T23:30:00-03:00');
    expect(currentReading('odometer', vehicle, now)).toBe(130_000);
    expect(currentReading('engineHours', vehicle, now)).toBe(500);
    expect(currentReading('calendar', vehicle, now)).toBe('2026-07-14');
    expect(currentReading('odometer', { odometerKm: null, engineHours: null }, now)).toBeNull();
  });
});

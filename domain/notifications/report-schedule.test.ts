import { describe, expect, it } from 'vitest';
import { DomainError } from '../domain-error.ts';
import { isReportKind, latestReportRun, nextReportRun, REPORT_KINDS, reportPeriod, type ReportTiming } from './report-schedule.ts';

// Madrid 2026: 29 March 02:00 CET → 03:00 CEST (01:00Z); 25 October 03:00 CEST → 02:00 CET (01:00Z).
// New York 2026: 8 March 02:00 EST → 03:00 EDT (07:00Z); 1 November 02:00 EDT → 01:00 EST (06:00Z).
const MADRID = 'Europe/Madrid';
const NEW_YORK = 'America/New_York';

const daily = (localTime: string, timezone: string): ReportTiming => ({ frequency: 'daily', localTime, weekday: null, timezone });
const weekly = (weekday: number, localTime: string, timezone: string): ReportTiming => ({ frequency: 'weekly', localTime, weekday, timezone });
const next = (t: ReportTiming, after: string) => nextReportRun(t, new Date(after)).toISOString();
const period = (t: ReportTiming, runAt: string) => {
  const p = reportPeriod(t, new Date(runAt));
  return [p.start.toISOString(), p.end.toISOString()];
};

describe('nextReportRun, daily', () => {
  it.each([
    ['later the same local day', daily('08:00', MADRID), '2026-11-28T06:00:00Z', '2026-11-28T07:00:00.000Z'],
    ['exactly at the run: the next day', daily('08:00', MADRID), '2026-11-28T07:00:00Z', '2026-11-29T07:00:00.000Z'],
    ['a millisecond before the run: that run', daily('08:00', MADRID), '2026-11-28T06:59:59.999Z', '2026-11-28T07:00:00.000Z'],
    ['after the time: tomorrow', daily('08:00', MADRID), '2026-11-28T12:00:00Z', '2026-11-29T07:00:00.000Z'],
    ['local midnight east of UTC', daily('00:00', 'Asia/Kolkata'), '2026-11-28T18:30:00Z', '2026-11-29T18:30:00.000Z'],
    ['late evening west of UTC, the next UTC day', daily('23:30', NEW_YORK), '2026-11-28T12:00:00Z', '2026-11-29T04:30:00.000Z'],
  ])('%s', (_, t, after, expected) => {
    expect(next(t, after)).toBe(expected);
  });

  it('keeps the local time across the spring change in Madrid (24 h becomes 23 h)', () => {
    const t = daily('08:00', MADRID);
    expect(next(t, '2026-03-28T07:00:00Z')).toBe('2026-03-29T06:00:00.000Z'); // 08:00 CET → 08:00 CEST
    expect(next(t, '2026-03-29T06:00:00Z')).toBe('2026-03-30T06:00:00.000Z');
  });

  it('keeps the local time across the autumn change in Madrid (24 h becomes 25 h)', () => {
    const t = daily('08:00', MADRID);
    expect(next(t, '2026-10-24T06:00:00Z')).toBe('2026-10-25T07:00:00.000Z');
    expect(next(t, '2026-10-25T07:00:00Z')).toBe('2026-10-26T07:00:00.000Z');
  });

  it('runs a skipped local time just after the gap, then at the usual time again', () => {
    const t = daily('02:30', MADRID);
    expect(next(t, '2026-03-28T12:00:00Z')).toBe('2026-03-29T01:30:00.000Z'); // 02:30 does not exist: 03:30 CEST
    expect(next(t, '2026-03-29T01:30:00Z')).toBe('2026-03-30T00:30:00.000Z');
  });

  it('runs a repeated local time once, at its first occurrence', () => {
    const t = daily('02:30', MADRID);
    expect(next(t, '2026-10-24T12:00:00Z')).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
    expect(next(t, '2026-10-25T00:30:00Z')).toBe('2026-10-26T01:30:00.000Z'); // not 02:30 CET the same night
  });

  it('follows New York across both changes', () => {
    expect(next(daily('07:00', NEW_YORK), '2026-03-07T12:00:00Z')).toBe('2026-03-08T11:00:00.000Z'); // EST → EDT
    expect(next(daily('07:00', NEW_YORK), '2026-10-31T11:00:00Z')).toBe('2026-11-01T12:00:00.000Z'); // EDT → EST
    expect(next(daily('02:15', NEW_YORK), '2026-03-07T12:00:00Z')).toBe('2026-03-08T07:15:00.000Z'); // skipped: 03:15 EDT
    expect(next(daily('01:30', NEW_YORK), '2026-10-31T06:00:00Z')).toBe('2026-11-01T05:30:00.000Z'); // first 01:30, EDT
    expect(next(daily('01:30', NEW_YORK), '2026-11-01T05:30:00Z')).toBe('2026-11-02T06:30:00.000Z');
  });
});

describe('nextReportRun, weekly', () => {
  // 29 November 2026 is a Sunday, 30 November a Monday.
  it.each([
    ['Sunday → Monday, the next day', weekly(1, '07:00', MADRID), '2026-11-29T12:00:00Z', '2026-11-30T06:00:00.000Z'],
    ['exactly at the run: a week later', weekly(1, '07:00', MADRID), '2026-11-30T06:00:00Z', '2026-12-07T06:00:00.000Z'],
    ['Monday → Sunday, wrapping the week', weekly(7, '07:00', MADRID), '2026-11-30T12:00:00Z', '2026-12-06T06:00:00.000Z'],
    ['the run day, after its time: a week later', weekly(7, '07:00', MADRID), '2026-11-29T12:00:00Z', '2026-12-06T06:00:00.000Z'],
    ['across the new year', weekly(5, '18:00', MADRID), '2026-12-26T00:00:00Z', '2027-01-01T17:00:00.000Z'],
    ['the weekday of the local date, not the UTC one', weekly(1, '00:30', 'Asia/Tokyo'), '2026-11-29T12:00:00Z', '2026-11-29T15:30:00.000Z'],
  ])('%s', (_, t, after, expected) => {
    expect(next(t, after)).toBe(expected);
  });

  it('keeps the local time on the Sunday of each DST change', () => {
    expect(next(weekly(7, '02:30', MADRID), '2026-03-22T12:00:00Z')).toBe('2026-03-29T01:30:00.000Z');
    expect(next(weekly(7, '09:00', MADRID), '2026-10-18T12:00:00Z')).toBe('2026-10-25T08:00:00.000Z');
    expect(next(weekly(7, '09:00', NEW_YORK), '2026-03-01T14:00:00Z')).toBe('2026-03-08T13:00:00.000Z');
  });

  it('refuses a weekly timing without a weekday, and a time that is not HH:mm', () => {
    expect(() => nextReportRun(weekly(0, '07:00', MADRID), new Date())).toThrow(DomainError);
    expect(() => nextReportRun({ frequency: 'weekly', localTime: '07:00', weekday: null, timezone: MADRID }, new Date())).toThrow(DomainError);
    expect(() => nextReportRun(daily('7:00', MADRID), new Date())).toThrow(DomainError);
    expect(() => nextReportRun(daily('24:00', MADRID), new Date())).toThrow(DomainError);
  });
});

describe('latestReportRun', () => {
  const latest = (t: ReportTiming, at: string) => latestReportRun(t, new Date(at)).toISOString();

  it.each([
    ['exactly at a run: that run', daily('08:00', MADRID), '2026-11-28T07:00:00Z', '2026-11-28T07:00:00.000Z'],
    ['a millisecond before: the day before', daily('08:00', MADRID), '2026-11-28T06:59:59.999Z', '2026-11-27T07:00:00.000Z'],
    ['days after: the last one', daily('08:00', MADRID), '2026-12-03T12:00:00Z', '2026-12-03T07:00:00.000Z'],
    ['weekly, wrapping back over the week', weekly(1, '07:00', MADRID), '2026-11-29T12:00:00Z', '2026-11-23T06:00:00.000Z'],
    ['a skipped local time: just after the gap', daily('02:30', MADRID), '2026-03-29T05:00:00Z', '2026-03-29T01:30:00.000Z'],
    ['a repeated local time: its first occurrence', daily('01:30', NEW_YORK), '2026-11-01T07:00:00Z', '2026-11-01T05:30:00.000Z'],
  ])('%s', (_, t, at, expected) => {
    expect(latest(t, at)).toBe(expected);
  });

  it('is the run before the next one', () => {
    for (const t of [daily('02:30', MADRID), weekly(7, '01:30', NEW_YORK)]) {
      for (let h = 0; h < 24 * 400; h += 7) {
        const at = new Date(Date.parse('2026-01-01T00:00:00Z') + h * 3_600_000);
        const before = latestReportRun(t, at);
        expect(before.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(nextReportRun(t, before).getTime()).toBe(nextReportRun(t, at).getTime());
      }
    }
  });
});

describe('reportPeriod', () => {
  it('daily: the whole local day before the run', () => {
    expect(period(daily('08:00', MADRID), '2026-11-28T07:00:00Z')).toEqual(['2026-11-26T23:00:00.000Z', '2026-11-27T23:00:00.000Z']);
    expect(period(daily('23:30', NEW_YORK), '2026-11-29T04:30:00Z')).toEqual(['2026-11-27T05:00:00.000Z', '2026-11-28T05:00:00.000Z']);
  });

  it('daily: a 23-hour day in spring and a 25-hour one in autumn', () => {
    expect(period(daily('08:00', MADRID), '2026-03-30T06:00:00Z')).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(period(daily('08:00', MADRID), '2026-10-26T07:00:00Z')).toEqual(['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect(period(daily('07:00', NEW_YORK), '2026-03-09T11:00:00Z')).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
  });

  it('daily: a run on the day of the change reports the ordinary day before', () => {
    expect(period(daily('02:30', MADRID), '2026-03-29T01:30:00Z')).toEqual(['2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z']);
  });

  it('weekly: the seven local days before the run day', () => {
    expect(period(weekly(1, '07:00', MADRID), '2026-11-30T06:00:00Z')).toEqual(['2026-11-22T23:00:00.000Z', '2026-11-29T23:00:00.000Z']);
    // A week holding the spring change in New York is 167 hours.
    expect(period(weekly(1, '07:00', NEW_YORK), '2026-03-09T11:00:00Z')).toEqual(['2026-03-02T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
  });

  it('every run reports the period right after the previous run’s', () => {
    for (const t of [daily('02:30', MADRID), daily('01:30', NEW_YORK), weekly(7, '02:30', MADRID), weekly(3, '23:59', NEW_YORK)]) {
      let run = nextReportRun(t, new Date('2026-01-01T00:00:00Z'));
      let previous = reportPeriod(t, run);
      for (let i = 0; i < 400; i++) {
        run = nextReportRun(t, run);
        const current = reportPeriod(t, run);
        expect(current.start.toISOString()).toBe(previous.end.toISOString());
        expect(current.end.getTime()).toBeLessThanOrEqual(run.getTime());
        previous = current;
      }
    }
  });
});

describe('REPORT_KINDS', () => {
  it('names the three reports', () => {
    expect(REPORT_KINDS).toEqual(['trips', 'geofences', 'maintenance']);
    expect(isReportKind('trips')).toBe(true);
    expect(isReportKind('positions')).toBe(false);
  });
});

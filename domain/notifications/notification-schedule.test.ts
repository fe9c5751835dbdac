import { describe, expect, it } from 'vitest';
import { inSchedule, normaliseSchedule } from './notification-schedule.ts';

const nights = { days: [1, 2, 3, 4, 5], from: '22:00', to: '06:00' };
const at = (iso: string) => new Date(iso);

describe('a notification schedule', () => {
  it('takes the evening part of a night window on its own days', () => {
    // Friday 2026-11-27 23:30 in Madrid (UTC+1).
    expect(inSchedule(nights, at('2026-11-27T22:30:00Z'), 'Europe/Madrid')).toBe(true);
    // Saturday evening is not a night window's day.
    expect(inSchedule(nights, at('2026-11-28T22:30:00Z'), 'Europe/Madrid')).toBe(false);
  });

  it('gives the morning part past midnight to the day the window opened', () => {
    // Saturday 03:00 Madrid belongs to Friday's night.
    expect(inSchedule(nights, at('2026-11-28T02:00:00Z'), 'Europe/Madrid')).toBe(true);
    // Monday 03:00 belongs to Sunday's night, which is not chosen.
    expect(inSchedule(nights, at('2026-11-30T02:00:00Z'), 'Europe/Madrid')).toBe(false);
  });

  it('does not fire by day', () => {
    expect(inSchedule(nights, at('2026-11-27T11:00:00Z'), 'Europe/Madrid')).toBe(false);
    // 06:00 local is the end, excluded.
    expect(inSchedule(nights, at('2026-11-27T05:00:00Z'), 'Europe/Madrid')).toBe(false);
    expect(inSchedule(nights, at('2026-11-27T04:59:00Z'), 'Europe/Madrid')).toBe(true);
  });

  it('reads the hours in the rule\'s timezone', () => {
    const office = { days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
    // 15:00 UTC on a Wednesday: 10:00 in New York, 16:00 in Madrid, 00:00 Thursday in Tokyo.
    const instant = at('2026-11-25T15:00:00Z');
    expect(inSchedule(office, instant, 'America/New_York')).toBe(true);
    expect(inSchedule(office, instant, 'Europe/Madrid')).toBe(true);
    expect(inSchedule(office, instant, 'Asia/Tokyo')).toBe(false);
  });

  it('treats equal from and to as the whole of each chosen day', () => {
    const weekends = { days: [6, 7], from: '00:00', to: '00:00' };
    expect(inSchedule(weekends, at('2026-11-28T12:00:00Z'), 'UTC')).toBe(true);
    expect(inSchedule(weekends, at('2026-11-27T12:00:00Z'), 'UTC')).toBe(false);
  });

  it('refuses days and times that are not', () => {
    expect(() => normaliseSchedule({ days: [], from: '22:00', to: '06:00' })).toThrow(/at least one ISO weekday/);
    expect(() => normaliseSchedule({ days: [0], from: '22:00', to: '06:00' })).toThrow(/not an ISO weekday/);
    expect(() => normaliseSchedule({ days: [1], from: '24:00', to: '06:00' })).toThrow(/HH:mm/);
    expect(() => normaliseSchedule({ days: [1], from: '7:00', to: '06:00' })).toThrow(/HH:mm/);
    expect(normaliseSchedule({ days: [5, 1, 5], from: '22:00', to: '06:00' })).toEqual({ days: [1, 5], from: '22:00', to: '06:00' });
  });
});

import { describe, expect, it } from 'vitest';
import { utcMillis } from './utc-millis.ts';

describe('utcMillis', () => {
  it('agrees with Date.UTC, odd values rolling over alike', () => {
    for (let year = 1970; year < 2260; year += 3) {
      for (let month = 0; month <= 26; month++) {
        for (const day of [0, 1, 15, 28, 29, 30, 31, 32, 99]) {
          expect(utcMillis(year, month, day, 25, 61, 70)).toBe(Date.UTC(year, month - 1, day, 25, 61, 70));
          expect(utcMillis(year, month, day, 0, 0, 0)).toBe(Date.UTC(year, month - 1, day));
        }
      }
    }
  });

  it('places leap days', () => {
    expect(new Date(utcMillis(2024, 2, 29, 12, 0, 0)).toISOString()).toBe('2024-02-29T12:00:00.000Z');
    expect(new Date(utcMillis(2100, 2, 29, 0, 0, 0)).toISOString()).toBe('2100-03-01T00:00:00.000Z');
  });
});

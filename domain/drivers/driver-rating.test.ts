import { describe, expect, it } from 'vitest';
import { driverRating } from './driver-rating.ts';

describe('driverRating', () => {
  it.each([
    // 100 km without a fault.
    [{ distanceM: 100_000, overspeedS: 0, harshEvents: 0, idleS: 0 }, 100],
    // Per 100 km: 2 overspeed minutes (−4), 1 harsh event (−5), 20 idle minutes (−10).
    [{ distanceM: 100_000, overspeedS: 120, harshEvents: 1, idleS: 1_200 }, 81],
    // The same faults over 200 km weigh half.
    [{ distanceM: 200_000, overspeedS: 120, harshEvents: 1, idleS: 1_200 }, 91],
    // Far worse than the scale: clamped at 0.
    [{ distanceM: 10_000, overspeedS: 3_600, harshEvents: 20, idleS: 0 }, 0],
    // Exactly the minimum distance is rated.
    [{ distanceM: 10_000, overspeedS: 0, harshEvents: 1, idleS: 0 }, 50],
  ])('%j rates %d', (totals, expected) => expect(driverRating(totals)).toBe(expected));

  it('is null under 10 km: too little driving to judge', () => {
    expect(driverRating({ distanceM: 9_999, overspeedS: 0, harshEvents: 0, idleS: 0 })).toBeNull();
    expect(driverRating({ distanceM: 0, overspeedS: 0, harshEvents: 0, idleS: 0 })).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { CURRENT_FIX_REASON, SLOW_DOWN_REASON, newestFix, safeStopHold } from './safe-stop-rule.ts';

const now = Date.parse('2026-05-01T10:00:00Z');
const limits = { thresholdKmh: 20, maxFixAgeMs: 60_000 };
const fix = (speedKmh: number | null, secondsAgo = 5, valid = true) => ({ speedKmh, fixTime: new Date(now - secondsAgo * 1000), valid });
const stop = { type: 'engine_stop' as const, params: {} };

describe('safeStopHold', () => {
  it('lets an engine stop go on a current fix at or below the threshold, and holds it above', () => {
    expect(safeStopHold(stop, fix(45), limits, now)).toBe(SLOW_DOWN_REASON);
    expect(safeStopHold(stop, fix(20.5), limits, now)).toBe(SLOW_DOWN_REASON);
    expect(safeStopHold(stop, fix(20), limits, now)).toBeNull();
    expect(safeStopHold(stop, fix(0), limits, now)).toBeNull();
  });

  it('holds an engine stop without a current, valid fix with a speed', () => {
    expect(safeStopHold(stop, undefined, limits, now)).toBe(CURRENT_FIX_REASON);
    expect(safeStopHold(stop, fix(0, 61), limits, now)).toBe(CURRENT_FIX_REASON);
    expect(safeStopHold(stop, fix(0, 60), limits, now)).toBeNull();
    expect(safeStopHold(stop, fix(0, 5, false), limits, now)).toBe(CURRENT_FIX_REASON);
    expect(safeStopHold(stop, fix(null), limits, now)).toBe(CURRENT_FIX_REASON);
    // A tracker whose clock runs ahead does not make its fixes current forever.
    expect(safeStopHold(stop, fix(0, -3600), limits, now)).toBe(CURRENT_FIX_REASON);
  });

  it('lets force and every other type through', () => {
    expect(safeStopHold({ type: 'engine_stop', params: { force: true } }, fix(90), limits, now)).toBeNull();
    expect(safeStopHold({ type: 'engine_stop', params: { force: true } }, undefined, limits, now)).toBeNull();
    expect(safeStopHold({ type: 'engine_stop', params: { force: 'yes' } }, fix(90), limits, now)).toBe(SLOW_DOWN_REASON);
    expect(safeStopHold({ type: 'engine_resume', params: {} }, fix(90), limits, now)).toBeNull();
    expect(safeStopHold({ type: 'siren_on', params: {} }, undefined, limits, now)).toBeNull();
    expect(safeStopHold({ type: 'custom', params: {} }, undefined, limits, now)).toBeNull();
  });
});

describe('newestFix', () => {
  it('keeps the fix with the latest fix time, whatever order they came in', () => {
    const older = fix(0, 300);
    const newer = fix(90, 2);
    expect(newestFix([newer, older])).toBe(newer);
    expect(newestFix([older], newer)).toBe(newer);
    expect(newestFix([], undefined)).toBeUndefined();
  });
});

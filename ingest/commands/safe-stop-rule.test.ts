import { describe, expect, it } from 'vitest';
import { SLOW_DOWN_REASON, safeStopHold } from './safe-stop-rule.ts';

describe('the safe stop rule', () => {
  it('holds an engine stop while the last fix is above the threshold, and lets it go at or below it', () => {
    expect(safeStopHold({ type: 'engine_stop', params: {} }, 45, 20)).toBe(SLOW_DOWN_REASON);
    expect(safeStopHold({ type: 'engine_stop', params: {} }, 20, 20)).toBeNull();
    expect(safeStopHold({ type: 'engine_stop', params: {} }, 0, 20)).toBeNull();
  });

  it('lets a vehicle with no fix, a forced stop and every other command go', () => {
    expect(safeStopHold({ type: 'engine_stop', params: {} }, null, 20)).toBeNull();
    expect(safeStopHold({ type: 'engine_stop', params: { force: true } }, 90, 20)).toBeNull();
    expect(safeStopHold({ type: 'engine_stop', params: { force: 'yes' } }, 90, 20)).toBe(SLOW_DOWN_REASON);
    expect(safeStopHold({ type: 'engine_resume', params: {} }, 90, 20)).toBeNull();
    expect(safeStopHold({ type: 'siren_on', params: {} }, 90, 20)).toBeNull();
  });
});

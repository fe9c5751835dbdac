import { describe, expect, it } from 'vitest';
import type { StoredFix } from '../domain/stored-rows.ts';
import { CommittedFixes } from './committed-fixes.ts';

const T0 = Date.parse('2024-07-01T10:00:00Z');
const at = (minute: number) => new Date(T0 + minute * 60_000);
const fix = (deviceId: number, minute: number, attributes: Record<string, unknown> = {}): StoredFix => ({
  deviceId, fixTime: at(minute), receivedAt: new Date(), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 30, attributes,
});
const minutes = (fixes: Array<{ fixTime: Date }> | undefined) => fixes?.map((f) => (f.fixTime.getTime() - T0) / 60_000);

describe('CommittedFixes', () => {
  it('gives a device its fixes after a cursor in fix-time order, whatever order they were committed in, each once', () => {
    const store = new CommittedFixes();
    store.add([fix(1, 5), fix(2, 1), fix(1, 2)]);
    store.add([fix(1, 3), fix(1, 5), fix(1, 9)]);
    expect(minutes(store.after(1, null))).toEqual([2, 3, 5, 9]);
    expect(minutes(store.after(1, at(3)))).toEqual([5, 9]);
    expect(minutes(store.after(1, at(9)))).toEqual([]);
    expect(minutes(store.after(2, null))).toEqual([1]);
    expect(store.after(3, null)).toBeUndefined();
    expect(store.size).toBe(5);
  });

  it('lets go of the fixes a cursor has passed', () => {
    const store = new CommittedFixes();
    store.add([fix(1, 1), fix(1, 2), fix(1, 3), fix(2, 1)]);
    store.evaluated([{ deviceId: 1, cursor: at(2) }, { deviceId: 2, cursor: at(1) }]);
    expect(minutes(store.after(1, null))).toEqual([3]);
    expect(store.after(2, null)).toBeUndefined();
    expect(store.size).toBe(1);
  });

  it('gives nothing for a device while a fix it cannot read back exactly lies after the cursor', () => {
    const store = new CommittedFixes();
    store.add([fix(1, 1), fix(1, 2, { alarm: 7 }), fix(1, 3)]);
    expect(store.after(1, null)).toBeUndefined();
    expect(minutes(store.after(1, at(2)))).toEqual([3]);
    store.evaluated([{ deviceId: 1, cursor: at(2) }]);
    expect(minutes(store.after(1, null))).toEqual([3]);
  });

  it('starts again empty rather than hold more than its bound', () => {
    const store = new CommittedFixes(3);
    store.add([fix(1, 1), fix(1, 2)]);
    store.add([fix(2, 1), fix(2, 2)]);
    expect(store.after(1, null)).toBeUndefined();
    expect(minutes(store.after(2, null))).toEqual([1, 2]);
    expect(store.size).toBe(2);
  });
});

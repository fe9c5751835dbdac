import { describe, expect, it } from 'vitest';
import { evaluateFixes, type EvaluatedFix } from './fence-crossings.ts';
import { GeofenceIndex } from './geofence-index.ts';
import { lateExcursions, type StoredCrossing, type WindowFix } from './late-crossings.ts';

const box = (x0: number, y0: number, x1: number, y1: number) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];
// Geofence 1 spans lng 0..1, geofence 2 lng 2..3 (both lat 0..1).
const index = new GeofenceIndex([
  { id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(0, 0, 1, 1)] } },
  { id: 2, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(2, 0, 3, 1)] } },
]);
const IN_1 = 0.5;
const IN_2 = 2.5;
const OUT = -5;
const fix = (second: number, lng: number, late = false): WindowFix => ({ fixTime: second * 1000, valid: true, latitude: 0.5, longitude: lng, late });
const late = (second: number, lng: number) => fix(second, lng, true);
const stored = (type: 'enter' | 'exit', geofenceId: number, second: number): StoredCrossing => ({ type, geofenceId, fixTime: second * 1000 });
const summary = (excursions: ReturnType<typeof lateExcursions>) =>
  excursions.flatMap((e) => [e.into, e.back]).map((c) => `${c.type} ${c.geofenceId} @${c.fixTime / 1000}`);

describe('lateExcursions', () => {
  it('adds the enter and exit of an excursion that only late fixes saw', () => {
    // Evaluated: outside at 10..20. Late: 3 out, 4 and 5 inside geofence 1, 6 out.
    const fixes = [late(3, OUT), late(4, IN_1), late(5, IN_1), late(6, OUT), fix(10, OUT), fix(20, OUT)];
    expect(summary(lateExcursions(index, new Map(), new Set(), [], fixes))).toEqual(['enter 1 @4', 'exit 1 @6']);
  });

  it('adds the exit and re-entry of a late excursion outside a geofence the device was in', () => {
    const fixes = [fix(0, IN_1), late(5, OUT), late(6, OUT), fix(10, IN_1)];
    expect(summary(lateExcursions(index, new Map(), new Set(), [stored('enter', 1, 0)], fixes))).toEqual(['exit 1 @5', 'enter 1 @10']);
  });

  it('adds nothing once the excursion is stored: the same late fixes twice add nothing', () => {
    const fixes = [late(3, OUT), late(4, IN_1), late(5, IN_1), late(6, OUT), fix(10, OUT)];
    expect(lateExcursions(index, new Map(), new Set(), [stored('enter', 1, 4), stored('exit', 1, 6)], fixes)).toEqual([]);
  });

  it('moves no recorded crossing: a late fix that shows an enter happened earlier than recorded adds nothing', () => {
    const fixes = [fix(0, OUT), late(5, IN_1), fix(10, IN_1)];
    expect(lateExcursions(index, new Map(), new Set(), [stored('enter', 1, 10)], fixes)).toEqual([]);
  });

  it('equals the evaluation in order for an excursion between two evaluated fixes, geofence by geofence', () => {
    const ordered: EvaluatedFix[] = [fix(0, OUT), fix(1, IN_2), fix(2, IN_2), fix(3, OUT), fix(4, IN_1), fix(5, OUT)];
    const inOrder = evaluateFixes(index, new Map(), { cursor: null, inside: new Int32Array(0), pending: [] }, ordered).crossings;
    // Evaluated without fixes 1 and 2 (they came late): only geofence 1 was recorded.
    const recorded = evaluateFixes(index, new Map(), { cursor: null, inside: new Int32Array(0), pending: [] }, ordered.filter((_, i) => i !== 1 && i !== 2)).crossings;
    const window = ordered.map((f, i) => ({ ...f, late: i === 1 || i === 2 }));
    const added = lateExcursions(index, new Map(), new Set(), recorded, window).flatMap((e) => [e.into, e.back]);
    const all = [...recorded, ...added].sort((a, b) => a.fixTime - b.fixTime).map((c) => `${c.type} ${c.geofenceId} @${c.fixTime / 1000}`);
    expect(all).toEqual(inOrder.map((c) => `${c.type} ${c.geofenceId} @${c.fixTime / 1000}`));
  });

  it('leaves alone geofences with a dwell time, and geofences an evaluated fix no longer agrees with', () => {
    const fixes = [late(3, OUT), late(4, IN_1), late(5, OUT)];
    expect(lateExcursions(index, new Map([[1, { enterMs: 60_000, exitMs: 0 }]]), new Set(), [], fixes)).toEqual([]);
    // The timeline says inside geofence 2 at 0, but the evaluated fix at 0 is outside it (it was moved).
    const moved = [fix(0, OUT), late(3, IN_2), fix(6, OUT)];
    expect(lateExcursions(index, new Map(), new Set([2]), [], moved)).toEqual([]);
  });

  it('ignores invalid fixes, and a run no fix closes', () => {
    expect(lateExcursions(index, new Map(), new Set(), [], [fix(0, OUT), { ...late(3, IN_1), valid: false }, fix(6, OUT)])).toEqual([]);
    expect(lateExcursions(index, new Map(), new Set(), [], [fix(0, OUT), late(3, IN_1), late(4, IN_1)])).toEqual([]);
  });
});

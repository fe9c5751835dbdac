import { describe, expect, it } from 'vitest';
import { evaluateFixes, type DwellRules, type EvaluatedFix, type FenceState } from './fence-crossings.ts';
import { GeofenceIndex } from './geofence-index.ts';

const box = (x0: number, y0: number, x1: number, y1: number) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];
// Geofence 1 spans lng 0..1, geofence 2 lng 2..3 (both lat 0..1); 3 overlaps 2 (lng 2.5..4).
const index = new GeofenceIndex([
  { id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(0, 0, 1, 1)] } },
  { id: 2, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(2, 0, 3, 1)] } },
  { id: 3, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(2.5, 0, 4, 1)] } },
]);
const start: FenceState = { cursor: null, inside: new Int32Array(0), pending: [] };
const at = (second: number, lng: number, valid = true): EvaluatedFix => ({ fixTime: second * 1000, valid, latitude: 0.5, longitude: lng });
const summary = (crossings: ReturnType<typeof evaluateFixes>['crossings']) => crossings.map((c) => `${c.type} ${c.geofenceId} @${c.fixTime / 1000}`);

describe('evaluateFixes', () => {
  it('turns a drive through geofences into enter and exit crossings in time order', () => {
    const { state, crossings } = evaluateFixes(index, new Map(), start, [at(1, -1), at(2, 0.5), at(3, 1.5), at(4, 2.2), at(5, 2.7), at(6, 3.5), at(7, 5)]);
    expect(summary(crossings)).toEqual(['enter 1 @2', 'exit 1 @3', 'enter 2 @4', 'enter 3 @5', 'exit 2 @6', 'exit 3 @7']);
    expect(state).toMatchObject({ cursor: 7000, pending: [] });
    expect([...state.inside]).toEqual([]);
  });

  it('skips invalid fixes and fixes not newer than the cursor, but moves the cursor past invalid ones', () => {
    const first = evaluateFixes(index, new Map(), start, [at(10, 0.5)]);
    expect(summary(first.crossings)).toEqual(['enter 1 @10']);
    const second = evaluateFixes(index, new Map(), first.state, [at(5, 5), at(10, 5), at(11, 5, false), at(12, 0.6)]);
    expect(second.crossings).toEqual([]);
    expect(second.state.cursor).toBe(12_000);
    expect([...second.state.inside]).toEqual([1]);
  });

  it('gives the same result whether fixes come in one batch or one at a time (replay is safe)', () => {
    const fixes = [at(1, 0.5), at(2, 2.6), at(3, 3.5), at(4, 0.2), at(5, -3)];
    const whole = evaluateFixes(index, new Map(), start, fixes);
    let state = start;
    const pieces = [];
    for (const fix of fixes) {
      const step = evaluateFixes(index, new Map(), state, [fix]);
      state = step.state;
      pieces.push(...step.crossings);
    }
    expect(pieces).toEqual(whole.crossings);
    expect(state).toEqual(whole.state);
  });

  it('with a dwell time, counts an enter only after the device stayed, at the time of its first fix inside', () => {
    const dwell: DwellRules = new Map([[1, { enterMs: 30_000, exitMs: 0 }]]);
    const brief = evaluateFixes(index, dwell, start, [at(0, 0.5), at(10, 0.5), at(20, 5)]);
    expect(brief.crossings).toEqual([]);
    expect(brief.state.pending).toEqual([]);
    const stays = evaluateFixes(index, dwell, start, [at(0, 0.5), at(10, 0.5), at(20, 0.5)]);
    expect(stays.crossings).toEqual([]);
    expect(stays.state.pending).toMatchObject([{ geofenceId: 1, type: 'enter', since: 0 }]);
    const confirmed = evaluateFixes(index, dwell, stays.state, [at(30, 0.6)]);
    expect(summary(confirmed.crossings)).toEqual(['enter 1 @0']);
    expect([...confirmed.state.inside]).toEqual([1]);
  });

  it('with an exit dwell, a short excursion outside is not an exit', () => {
    const dwell: DwellRules = new Map([[1, { enterMs: 0, exitMs: 60_000 }]]);
    const run = evaluateFixes(index, dwell, start, [at(0, 0.5), at(10, 1.2), at(20, 0.5), at(30, 1.2), at(100, 1.5)]);
    expect(summary(run.crossings)).toEqual(['enter 1 @0', 'exit 1 @30']);
  });

  it('forgets a geofence deleted while the device was inside, without an exit', () => {
    const inside = evaluateFixes(index, new Map(), start, [at(1, 0.5)]).state;
    const smaller = new GeofenceIndex([{ id: 2, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(2, 0, 3, 1)] } }]);
    const after = evaluateFixes(smaller, new Map(), inside, [at(2, 0.5)]);
    expect(after.crossings).toEqual([]);
    expect([...after.state.inside]).toEqual([]);
    const noneLeft = evaluateFixes(undefined, new Map(), inside, [at(2, 0.5)]);
    expect(noneLeft.crossings).toEqual([]);
    expect([...noneLeft.state.inside]).toEqual([]);
  });
});

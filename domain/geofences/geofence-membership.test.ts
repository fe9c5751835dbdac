import { describe, expect, it } from 'vitest';
import { GeofenceIndex } from './geofence-index.ts';
import { differences, evaluateMembership } from './geofence-membership.ts';

const box = (x0: number, y0: number, x1: number, y1: number) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];

// 1: a square with a hole; 2: a multipolygon of two squares; 3: a circle overlapping square 1; 4: a U (concave).
const index = new GeofenceIndex([
  { id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(0, 0, 10, 10), box(4, 4, 6, 6)] } },
  { id: 2, kind: 'polygon', geometry: { type: 'MultiPolygon', coordinates: [[box(20, 0, 21, 1)], [box(23, 0, 24, 1)]] } },
  { id: 3, kind: 'circle', lat: 9, lng: 9, radiusM: 200_000 },
  { id: 4, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[30, 0], [33, 0], [33, 3], [32, 3], [32, 1], [31, 1], [31, 3], [30, 3], [30, 0]]] } },
]);

const ids = (values: number[]) => Int32Array.from(values);

const STEPS: Array<{ what: string; previous: number[]; lat: number; lng: number; inside: number[]; entered: number[]; exited: number[] } | { what: string; previous: number[]; lat: number; lng: number; unchanged: true }> = [
  { what: 'outside everything, stays outside', previous: [], lat: -5, lng: -5, unchanged: true },
  { what: 'enters the square', previous: [], lat: 2, lng: 2, inside: [1], entered: [1], exited: [] },
  { what: 'moves within the square', previous: [1], lat: 3, lng: 3, unchanged: true },
  { what: 'into the hole: leaves the square', previous: [1], lat: 5, lng: 5, inside: [], entered: [], exited: [1] },
  { what: 'into the overlap of square and circle', previous: [1], lat: 9.5, lng: 9.5, inside: [1, 3], entered: [3], exited: [] },
  { what: 'out of the square, still in the circle', previous: [1, 3], lat: 10.5, lng: 9.5, inside: [3], entered: [], exited: [1] },
  { what: 'jumps from the circle into a multipolygon part', previous: [3], lat: 0.5, lng: 23.5, inside: [2], entered: [2], exited: [3] },
  { what: 'between the parts: outside', previous: [2], lat: 0.5, lng: 22, inside: [], entered: [], exited: [2] },
  { what: 'concave: into the notch leaves', previous: [4], lat: 2, lng: 31.5, inside: [], entered: [], exited: [4] },
  { what: 'concave: arm to arm stays', previous: [4], lat: 2, lng: 32.5, unchanged: true },
  { what: 'a removed geofence in the previous set counts as left', previous: [4, 99], lat: 2, lng: 32.5, inside: [4], entered: [], exited: [99] },
];

describe('evaluateMembership', () => {
  it.each(STEPS)('$what', (step) => {
    const change = evaluateMembership(index, ids(step.previous), step.lat, step.lng);
    if ('unchanged' in step) {
      expect(change).toBeNull();
      return;
    }
    expect(change).not.toBeNull();
    expect({ inside: [...change!.inside], entered: [...change!.entered], exited: [...change!.exited] }).toEqual({
      inside: step.inside,
      entered: step.entered,
      exited: step.exited,
    });
  });

  it('is a function of its inputs: the same call twice gives the same answer and leaves the input alone', () => {
    const previous = ids([3]);
    const a = evaluateMembership(index, previous, 0.5, 23.5);
    const b = evaluateMembership(index, previous, 0.5, 23.5);
    expect(a).toEqual(b);
    expect([...previous]).toEqual([3]);
    expect(a!.inside).not.toBe(b!.inside);
  });

  it('handles more geofences than its scratch space holds', () => {
    const many = new GeofenceIndex(Array.from({ length: 200 }, (_, i) => ({ id: i, kind: 'circle' as const, lat: 0, lng: 0, radiusM: 1000 + i })));
    const change = evaluateMembership(many, ids([]), 0, 0);
    expect(change!.inside.length).toBe(200);
    expect(change!.entered.length).toBe(200);
  });
});

describe('differences', () => {
  it.each([
    { before: [], after: [], entered: [], exited: [] },
    { before: [1, 2, 3], after: [1, 2, 3], entered: [], exited: [] },
    { before: [1, 3, 5], after: [2, 3, 4, 6], entered: [2, 4, 6], exited: [1, 5] },
    { before: [7], after: [], entered: [], exited: [7] },
  ])('$before → $after', ({ before, after, entered, exited }) => {
    const d = differences(ids(before), ids(after));
    expect({ entered: [...d.entered], exited: [...d.exited] }).toEqual({ entered, exited });
  });
});

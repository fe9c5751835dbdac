import { booleanPointInPolygon, polygon as turfPolygon } from '@turf/turf';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../runtime/seeded-random.ts';
import { EARTH_RADIUS_M, haversineMetres, type FenceShape } from './fence-shape.ts';
import { GeofenceIndex } from './geofence-index.ts';

const box = (x0: number, y0: number, x1: number, y1: number) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];
const reversed = (ring: number[][]) => [...ring].reverse();

/** The point `metres` from (lat, lng) on the initial bearing `degrees`, on the same sphere as the index. */
function destination(lat: number, lng: number, degrees: number, metres: number): [number, number] {
  const r = Math.PI / 180;
  const d = metres / EARTH_RADIUS_M;
  const [p1, l1, b] = [lat * r, lng * r, degrees * r];
  const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(b));
  const l2 = l1 + Math.atan2(Math.sin(b) * Math.sin(d) * Math.cos(p1), Math.cos(d) - Math.sin(p1) * Math.sin(p2));
  return [p2 / r, (((l2 / r + 540) % 360) - 180)];
}

const SHAPES: FenceShape[] = [
  // 1: a square with a square hole (ring given in the opposite winding: orientation must not matter).
  { id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(0, 0, 10, 10), reversed(box(4, 4, 6, 6))] } },
  // 2: two squares, the second with a hole.
  { id: 2, kind: 'polygon', geometry: { type: 'MultiPolygon', coordinates: [[box(20, 0, 21, 1)], [box(23, 0, 26, 3), box(24, 1, 25, 2)]] } },
  // 3: a U, concave, its ring left open (the index closes it).
  { id: 3, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[30, 0], [33, 0], [33, 3], [32, 3], [32, 1], [31, 1], [31, 3], [30, 3]]] } },
  // 4: a 1 km circle; 5: a 1 km circle at 80° N; 6: a 1 km circle across the antimeridian.
  { id: 4, kind: 'circle', lat: 45, lng: 7, radiusM: 1000 },
  { id: 5, kind: 'circle', lat: 80, lng: 40, radiusM: 1000 },
  { id: 6, kind: 'circle', lat: 0, lng: 179.999, radiusM: 1000 },
  // 7: a five-pointed star around (-20, -20), overlapping nothing else.
  {
    id: 7,
    kind: 'polygon',
    geometry: {
      type: 'Polygon',
      coordinates: [Array.from({ length: 11 }, (_, i) => {
        const a = ((i % 10) * Math.PI) / 5;
        const r = i % 2 === 0 ? 2 : 0.5;
        return [-20 + r * Math.sin(a), -20 + r * Math.cos(a)];
      })],
    },
  },
];

const CASES: Array<{ what: string; lat: number; lng: number; inside: number[] }> = [
  { what: 'square, in the solid part', lat: 2, lng: 2, inside: [1] },
  { what: 'square, in the hole', lat: 5, lng: 5, inside: [] },
  { what: 'square, just inside the hole edge', lat: 5, lng: 4 + 1e-7, inside: [] },
  { what: 'square, just outside the hole edge', lat: 5, lng: 4 - 1e-7, inside: [1] },
  { what: 'square, right of it', lat: 5, lng: 11, inside: [] },
  { what: 'square, level with a vertex', lat: 10 - 1e-9, lng: 5, inside: [1] },
  { what: 'multipolygon, first part', lat: 0.5, lng: 20.5, inside: [2] },
  { what: 'multipolygon, between the parts', lat: 0.5, lng: 22, inside: [] },
  { what: 'multipolygon, second part', lat: 0.5, lng: 23.5, inside: [2] },
  { what: 'multipolygon, hole of the second part', lat: 1.5, lng: 24.5, inside: [] },
  { what: 'concave, left arm', lat: 2, lng: 30.5, inside: [3] },
  { what: 'concave, in the notch', lat: 2, lng: 31.5, inside: [] },
  { what: 'concave, base under the notch', lat: 0.5, lng: 31.5, inside: [3] },
  { what: 'concave, right arm', lat: 2, lng: 32.5, inside: [3] },
  { what: 'star, center', lat: -20, lng: -20, inside: [7] },
  { what: 'star, between two points', lat: -20 + 1.2 * Math.cos(Math.PI / 5), lng: -20 + 1.2 * Math.sin(Math.PI / 5), inside: [] },
  { what: 'star, in a point', lat: -18.2, lng: -20, inside: [7] },
  { what: 'nowhere', lat: -60, lng: 100, inside: [] },
];

for (const [bearing, lat, lng, id] of [[0, 45, 7, 4], [90, 45, 7, 4], [225, 45, 7, 4], [0, 80, 40, 5], [90, 80, 40, 5], [90, 0, 179.999, 6], [270, 0, 179.999, 6]] as const) {
  for (const metres of [0, 999.99, 1000.01, 1500]) {
    const [pLat, pLng] = destination(lat, lng, bearing, metres);
    CASES.push({ what: `circle ${id}, ${metres} m at ${bearing}°`, lat: pLat, lng: pLng, inside: metres <= 1000 ? [id] : [] });
  }
}

describe('GeofenceIndex.query', () => {
  const index = new GeofenceIndex(SHAPES);
  const out = new Int32Array(8);
  it.each(CASES)('$what', ({ lat, lng, inside }) => {
    const count = index.query(lat, lng, out);
    expect([...out.subarray(0, count)]).toEqual(inside);
  });

  it('measures circles by great-circle distance', () => {
    const [lat, lng] = destination(45, 7, 33, 999.99);
    expect(haversineMetres(45, 7, lat, lng)).toBeCloseTo(999.99, 6);
  });
});

describe('GeofenceIndex changes', () => {
  it('adds, replaces and removes single geofences', () => {
    const index = new GeofenceIndex();
    const out = new Int32Array(4);
    expect(index.query(5, 5, out)).toBe(0);
    index.set({ id: 9, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(0, 0, 10, 10)] } });
    index.set({ id: 3, kind: 'circle', lat: 5, lng: 5, radiusM: 10 });
    expect([...out.subarray(0, index.query(5, 5, out))]).toEqual([3, 9]);
    index.set({ id: 9, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [box(20, 20, 30, 30)] } });
    expect([...out.subarray(0, index.query(5, 5, out))]).toEqual([3]);
    expect([...out.subarray(0, index.query(25, 25, out))]).toEqual([9]);
    expect(index.remove(3)).toBe(true);
    expect(index.remove(3)).toBe(false);
    expect(index.query(5, 5, out)).toBe(0);
    expect(index.size).toBe(1);
  });

  it('reports the full count when the output is too small', () => {
    const index = new GeofenceIndex(Array.from({ length: 5 }, (_, i) => ({ id: i + 1, kind: 'circle' as const, lat: 0, lng: 0, radiusM: 100 * (i + 1) })));
    const small = new Int32Array(2);
    expect(index.query(0, 0, small)).toBe(5);
    const big = new Int32Array(5);
    expect([...big.subarray(0, index.query(0, 0, big))]).toEqual([1, 2, 3, 4, 5]);
  });

  it('rejects shapes it cannot test', () => {
    const index = new GeofenceIndex();
    expect(() => index.set({ id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 1]]] } })).toThrow(/at least 3/);
    expect(() => index.set({ id: 1, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, NaN], [1, 1]]] } })).toThrow(/finite/);
    expect(() => index.set({ id: 1, kind: 'circle', lat: 91, lng: 0, radiusM: 1 })).toThrow(/bad circle/);
  });
});

describe('GeofenceIndex against turf over a few thousand random polygons', () => {
  it('agrees with @turf/boolean-point-in-polygon everywhere', () => {
    const random = seededRandom(7);
    const shapes: FenceShape[] = [];
    const rings: number[][][] = [];
    for (let id = 0; id < 3000; id++) {
      const [cx, cy, r] = [random() * 10, random() * 10, 0.01 + random() * 0.3];
      const n = 3 + Math.floor(random() * 20);
      const ring = Array.from({ length: n }, (_, i) => {
        const a = ((i + random() * 0.8) * 2 * Math.PI) / n;
        const d = r * (0.2 + random() * 0.8);
        return [cx + d * Math.cos(a), cy + d * Math.sin(a)];
      });
      ring.push(ring[0]!);
      rings.push(ring);
      shapes.push({ id, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } });
    }
    const index = new GeofenceIndex(shapes);
    const polygons = rings.map((ring) => turfPolygon([ring]));
    const out = new Int32Array(64);
    for (let k = 0; k < 2000; k++) {
      const [x, y] = [random() * 10, random() * 10];
      const expected = polygons.flatMap((p, id) => (booleanPointInPolygon([x, y], p) ? [id] : []));
      expect([...out.subarray(0, index.query(y, x, out))]).toEqual(expected);
    }
  });
});

import { EARTH_RADIUS_M, polygonParts, type FenceShape } from './fence-shape.ts';
import { packRTree } from './packed-rtree.ts';

const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;
const NODE_SIZE = 16;
// Widens a circle's box beyond rounding error of its computation (~1e-14°); 1e-9° is 0.1 mm.
const BOX_PAD_DEG = 1e-9;

/** One geofence ready for packing: its box, and its rings (closed) or circle. */
interface CompiledFence {
  id: number;
  circle: boolean;
  box: [number, number, number, number];
  coords: Float64Array;
  /** End (exclusive, in numbers) of each ring in `coords`. */
  ringEnds: number[];
  /** Number of rings in each polygon part. */
  partRings: number[];
  lat: number;
  lng: number;
  radiusM: number;
}

/** Everything the query reads, in flat arrays, items in the tree's leaf order. */
interface Packed {
  n: number;
  topLevel: number;
  boxes: Float64Array;
  levelStart: Int32Array;
  levelCount: Int32Array;
  ids: Int32Array;
  circle: Uint8Array;
  /** Item k's parts are itemPart[k] … itemPart[k + 1]; part p's rings partRing[p] …; ring r's numbers ringCoord[r] …. */
  itemPart: Int32Array;
  partRing: Int32Array;
  ringCoord: Int32Array;
  coords: Float64Array;
  /** Per item: center latitude and longitude (radians), cos(center latitude), sin²(radius / 2R). */
  circles: Float64Array;
  stack: Int32Array;
}

function compile(shape: FenceShape): CompiledFence {
  if (!Number.isInteger(shape.id)) throw new TypeError(`geofence id must be an integer, got ${shape.id}`);
  if (shape.kind === 'circle') return compileCircle(shape.id, shape.lat, shape.lng, shape.radiusM);
  const values: number[] = [];
  const ringEnds: number[] = [];
  const partRings: number[] = [];
  for (const part of polygonParts(shape.geometry)) {
    for (const ring of part) {
      if (ring.length < 3) throw new TypeError(`geofence ${shape.id}: a ring needs at least 3 positions`);
      for (const position of ring) values.push(Number(position[0]), Number(position[1]));
      const [x0, y0] = [values[values.length - 2 * ring.length]!, values[values.length - 2 * ring.length + 1]!];
      if (x0 !== values[values.length - 2] || y0 !== values[values.length - 1]) values.push(x0, y0); // close it
      ringEnds.push(values.length);
    }
    partRings.push(part.length);
  }
  const coords = Float64Array.from(values);
  if (coords.some((v) => !Number.isFinite(v))) throw new TypeError(`geofence ${shape.id}: coordinates must be finite numbers`);
  const box: CompiledFence['box'] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i < coords.length; i += 2) {
    box[0] = Math.min(box[0], coords[i]!);
    box[1] = Math.min(box[1], coords[i + 1]!);
    box[2] = Math.max(box[2], coords[i]!);
    box[3] = Math.max(box[3], coords[i + 1]!);
  }
  return { id: shape.id, circle: false, box, coords, ringEnds, partRings, lat: 0, lng: 0, radiusM: 0 };
}

function compileCircle(id: number, lat: number, lng: number, radiusM: number): CompiledFence {
  if (!(Math.abs(lat) <= 90 && Math.abs(lng) <= 180 && radiusM >= 0)) throw new TypeError(`geofence ${id}: bad circle ${lat}, ${lng}, ${radiusM} m`);
  const angle = radiusM / EARTH_RADIUS_M;
  const dLat = angle * DEG + BOX_PAD_DEG;
  const minLat = lat - dLat;
  const maxLat = lat + dLat;
  const box: CompiledFence['box'] = [-180, Math.max(-90, minLat), 180, Math.min(90, maxLat)];
  // The widest longitude of a spherical cap is asin(sin(angle) / cos(lat)); a cap over a pole, or one that
  // crosses the antimeridian, gets the whole longitude range (the haversine test is exact either way).
  const s = Math.sin(Math.min(angle, Math.PI / 2)) / Math.cos(lat * RAD);
  if (minLat > -90 && maxLat < 90 && s < 1) {
    const dLng = Math.asin(s) * DEG + BOX_PAD_DEG;
    if (lng - dLng >= -180 && lng + dLng <= 180) {
      box[0] = lng - dLng;
      box[2] = lng + dLng;
    }
  }
  return { id, circle: true, box, coords: new Float64Array(0), ringEnds: [], partRings: [], lat, lng, radiusM };
}

/**
 * The geofences of one account, for "which of them cover this point". A static packed R-tree over their
 * boxes plus the exact shapes in flat typed arrays, rebuilt on the first query after a change (changes are
 * rare, queries are per position). Polygons: ray casting, even-odd over all rings of a part, in the
 * longitude/latitude plane as PostGIS geometry does; circles: great-circle distance to the center ≤ radius.
 * A point exactly on a polygon's edge may go either way; one more than a centimetre away never does.
 */
export class GeofenceIndex {
  private readonly fences = new Map<number, CompiledFence>();
  private packed: Packed | undefined;

  constructor(shapes: Iterable<FenceShape> = []) {
    for (const shape of shapes) this.set(shape);
  }

  /** Adds a geofence, or replaces the one with the same id. */
  set(shape: FenceShape): void {
    this.fences.set(shape.id, compile(shape));
    this.packed = undefined;
  }

  remove(id: number): boolean {
    const removed = this.fences.delete(id);
    if (removed) this.packed = undefined;
    return removed;
  }

  has(id: number): boolean {
    return this.fences.has(id);
  }

  get size(): number {
    return this.fences.size;
  }

  /** Box of a geofence as [minLng, minLat, maxLng, maxLat], or undefined when it is not in the index. */
  box(id: number): readonly [number, number, number, number] | undefined {
    return this.fences.get(id)?.box;
  }

  /**
   * Writes the ids of the geofences covering (lat, lng) into `out` in ascending order and returns how many
   * there are. When that is more than `out.length`, only the first `out.length` were written (in no
   * particular order): grow `out` and ask again. Allocates nothing.
   */
  query(lat: number, lng: number, out: Int32Array): number {
    const p = this.packed ?? this.pack();
    if (p.n === 0) return 0;
    const { boxes, levelStart, levelCount, ids, circle, itemPart, partRing, ringCoord, coords, circles, stack } = p;
    const x = lng;
    const y = lat;
    const capacity = out.length;
    let count = 0;
    let cosLat = 2; // computed on the first circle, once per query
    let sp = 0;
    const top = 4 * levelStart[p.topLevel]!;
    if (x < boxes[top]! || y < boxes[top + 1]! || x > boxes[top + 2]! || y > boxes[top + 3]!) return 0;
    stack[sp++] = p.topLevel;
    stack[sp++] = 0;

    while (sp > 0) {
      const node = stack[--sp]!;
      const level = stack[--sp]! - 1;
      const first = node * NODE_SIZE;
      const end = Math.min(first + NODE_SIZE, levelCount[level]!);
      const base = levelStart[level]!;
      for (let c = first; c < end; c++) {
        const b = (base + c) << 2;
        if (x < boxes[b]! || y < boxes[b + 1]! || x > boxes[b + 2]! || y > boxes[b + 3]!) continue;
        if (level > 0) {
          stack[sp++] = level;
          stack[sp++] = c;
          continue;
        }
        let inside = false;
        if (circle[c] === 1) {
          const q = c << 2;
          if (cosLat === 2) cosLat = Math.cos(y * RAD);
          const sLat = Math.sin((y * RAD - circles[q]!) / 2);
          const sLng = Math.sin((x * RAD - circles[q + 1]!) / 2);
          inside = sLat * sLat + circles[q + 2]! * cosLat * sLng * sLng <= circles[q + 3]!;
        } else {
          // Ray casting to +x; a part holds the point when an odd number of its edges cross the ray.
          const partEnd = itemPart[c + 1]!;
          for (let part = itemPart[c]!; part < partEnd && !inside; part++) {
            let odd = false;
            const ringEnd = partRing[part + 1]!;
            for (let ring = partRing[part]!; ring < ringEnd; ring++) {
              const stop = ringCoord[ring + 1]!;
              let i = ringCoord[ring]!;
              let xj = coords[i]!;
              let yj = coords[i + 1]!;
              for (i += 2; i < stop; i += 2) {
                const xi = coords[i]!;
                const yi = coords[i + 1]!;
                if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
                xj = xi;
                yj = yi;
              }
            }
            inside = odd;
          }
        }
        if (inside) {
          if (count < capacity) out[count] = ids[c]!;
          count++;
        }
      }
    }
    if (count <= capacity) {
      // Insertion sort: a point is in a handful of geofences at most.
      for (let i = 1; i < count; i++) {
        const v = out[i]!;
        let j = i - 1;
        while (j >= 0 && out[j]! > v) {
          out[j + 1] = out[j]!;
          j--;
        }
        out[j + 1] = v;
      }
    }
    return count;
  }

  private pack(): Packed {
    const fences = [...this.fences.values()];
    const n = fences.length;
    const items = new Float64Array(4 * n);
    fences.forEach((f, i) => items.set(f.box, 4 * i));
    const tree = packRTree(items, n, NODE_SIZE);
    let parts = 0;
    let rings = 0;
    let numbers = 0;
    for (const f of fences) {
      parts += f.partRings.length;
      rings += f.ringEnds.length;
      numbers += f.coords.length;
    }
    const ids = new Int32Array(n);
    const circle = new Uint8Array(n);
    const itemPart = new Int32Array(n + 1);
    const partRing = new Int32Array(parts + 1);
    const ringCoord = new Int32Array(rings + 1);
    const coords = new Float64Array(numbers);
    const circles = new Float64Array(4 * n);
    let part = 0;
    let ring = 0;
    let at = 0;
    for (let k = 0; k < n; k++) {
      const f = fences[tree.order[k]!]!;
      ids[k] = f.id;
      itemPart[k] = part;
      if (f.circle) {
        circle[k] = 1;
        const half = Math.min(f.radiusM / EARTH_RADIUS_M, Math.PI) / 2;
        circles.set([f.lat * RAD, f.lng * RAD, Math.cos(f.lat * RAD), Math.sin(half) ** 2], 4 * k);
        continue;
      }
      coords.set(f.coords, at);
      let r = 0;
      for (const count of f.partRings) {
        partRing[part++] = ring;
        for (let i = 0; i < count; i++, r++) ringCoord[ring++] = at + (r === 0 ? 0 : f.ringEnds[r - 1]!);
      }
      at += f.coords.length;
    }
    itemPart[n] = part;
    partRing[parts] = ring;
    ringCoord[rings] = at;
    const topLevel = tree.levelCount.length - 1;
    // Deepest stack: every level below the root holding one full node of children, two numbers each.
    const stack = new Int32Array(2 * (NODE_SIZE * (topLevel + 1) + 1));
    this.packed = { n, topLevel, boxes: tree.boxes, levelStart: tree.levelStart, levelCount: tree.levelCount, ids, circle, itemPart, partRing, ringCoord, coords, circles, stack };
    return this.packed;
  }
}

import type { FenceShape } from './fence-shape.ts';
import { bandOf, compileFence, packFences, type CompiledFence, type PackedFences } from './packed-fences.ts';

const RAD = Math.PI / 180;
const NODE_SIZE = Number(process.env.GF_NODE ?? 16);

/**
 * The geofences of one account, for "which of them cover this point". A static packed R-tree over their
 * boxes plus the exact shapes in flat typed arrays, rebuilt on the first query after a change (changes are
 * rare, queries are per position). Polygons: ray casting, even-odd over all rings of a part, in the
 * longitude/latitude plane as PostGIS geometry does; circles: great-circle distance to the center ≤ radius.
 * A point exactly on a polygon's edge may go either way; one more than a centimetre away never does.
 */
export class GeofenceIndex {
  private readonly fences = new Map<number, CompiledFence>();
  private packed: PackedFences | undefined;

  constructor(shapes: Iterable<FenceShape> = []) {
    for (const shape of shapes) this.set(shape);
  }

  /** Adds a geofence, or replaces the one with the same id. */
  set(shape: FenceShape): void {
    this.fences.set(shape.id, compileFence(shape));
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
    const { boxes, levelStart, levelCount, ids, circle, itemPart, partMinY, partMaxY, partScale, partBands, partBand, bandStart, bandEdge, coords, circles, stack } = p;
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
          // Ray casting to +x against the edges of the point's band; odd crossings put it inside the part.
          const partEnd = itemPart[c + 1]!;
          for (let part = itemPart[c]!; part < partEnd && !inside; part++) {
            const minY = partMinY[part]!;
            if (y < minY || y >= partMaxY[part]!) continue;
            const band = partBand[part]! + bandOf(y, minY, partScale[part]!, partBands[part]!);
            const stop = bandStart[band + 1]!;
            let odd = false;
            for (let e = bandStart[band]!; e < stop; e++) {
              const i = bandEdge[e]!;
              const xj = coords[i]!;
              const yj = coords[i + 1]!;
              const xi = coords[i + 2]!;
              const yi = coords[i + 3]!;
              if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
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

  private pack(): PackedFences {
    this.packed = packFences([...this.fences.values()], NODE_SIZE);
    return this.packed;
  }
}

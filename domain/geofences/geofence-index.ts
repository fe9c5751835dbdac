import type { FenceShape } from './fence-shape.ts';
import { INSIDE, MIXED, RASTER_SIZE, ROW_WORDS } from './part-raster.ts';
import { bandOf, compileFence, packFences, PART_HEADER, type CompiledFence, type PackedFences } from './packed-fences.ts';

const RAD = Math.PI / 180;
const NODE_SIZE = 16;

/**
 * The geofences of one account, for "which of them cover this point". A static packed R-tree over their
 * boxes plus the exact shapes in flat typed arrays (packed-fences.ts), rebuilt on the first query after a
 * change: changes are rare, queries are per position, and a rebuild only concatenates what each geofence
 * compiled when it was set (~50 ms for 10,000 polygons). A candidate polygon is answered by its 32 × 32
 * in/out raster when the point's cell is whole (~80 % of candidates in the bench), else by ray casting
 * over its band's edges: even-odd over all rings of a part, inside when inside any part, in the
 * longitude/latitude plane as PostGIS geometry does. Circles: great-circle distance to the center ≤ radius.
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

  /**
   * What the last build searches with: a cell grid when the geofences are of similar size over a
   * bounded area (most fleets' depots, stops and zones), the R-tree otherwise. For tests and benches.
   */
  get structure(): 'grid' | 'tree' | 'unbuilt' {
    return this.packed ? (this.packed.grid ? 'grid' : 'tree') : 'unbuilt';
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
    const { boxes, levelStart, levelCount, ids, stack, grid } = p;
    const x = lng;
    const y = lat;
    const capacity = out.length;
    let count = 0;
    if (grid) {
      // One cell's list instead of a walk down the tree.
      if (x < grid.minX || y < grid.minY || x > grid.maxX || y > grid.maxY) return 0;
      const col = Math.min(grid.cols - 1, Math.floor((x - grid.minX) * grid.scaleX));
      const row = Math.min(grid.rows - 1, Math.floor((y - grid.minY) * grid.scaleY));
      const cell = row * grid.cols + col;
      const { cellItems } = grid;
      for (let i = grid.cellStart[cell]!, end = grid.cellStart[cell + 1]!; i < end; i++) {
        let c = cellItems[i]!;
        // Stored as ~k: the item covers the whole cell, so the point needs no test at all.
        if (c < 0) c = ~c;
        else {
          const b = c << 2;
          if (x < boxes[b]! || y < boxes[b + 1]! || x > boxes[b + 2]! || y > boxes[b + 3]!) continue;
          if (!covers(p, c, x, y)) continue;
        }
        if (count < capacity) out[count] = ids[c]!;
        count++;
      }
    } else {
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
          } else if (covers(p, c, x, y)) {
            if (count < capacity) out[count] = ids[c]!;
            count++;
          }
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

/** Whether leaf item `c` (its box already known to hold the point) covers (x = lng, y = lat). */
function covers(p: PackedFences, c: number, x: number, y: number): boolean {
  const { boxes, itemData, partData, rasters, rasterScale, circles } = p;
  const block = itemData[c]!;
  const partsEnd = itemData[c + 1]!;
  let part = block;
  if (part === partsEnd) {
    // A circle: haversine against the precomputed sin²(radius / 2R), no square root or arcsine.
    const q = c << 2;
    const sLat = Math.sin((y * RAD - circles[q]!) / 2);
    const sLng = Math.sin((x * RAD - circles[q + 1]!) / 2);
    return sLat * sLat + circles[q + 2]! * Math.cos(y * RAD) * sLng * sLng <= circles[q + 3]!;
  }
  // The raster answers for a cell no edge crosses; only a mixed cell goes on to the edges.
  const b = c << 2;
  const cx = Math.min(RASTER_SIZE - 1, Math.floor((x - boxes[b]!) * rasterScale[2 * c]!));
  const cy = Math.min(RASTER_SIZE - 1, Math.floor((y - boxes[b + 1]!) * rasterScale[2 * c + 1]!));
  const cell = (rasters[(c * RASTER_SIZE + cy) * ROW_WORDS + (cx >> 4)]! >>> ((cx & 15) << 1)) & 3;
  if (cell !== MIXED) return cell === INSIDE;
  // Ray casting to +x against the edges of the point's band; odd crossings put it inside the part.
  for (; part < partsEnd; part = block + partData[part + 4]!) {
    const minY = partData[part]!;
    if (y < minY || y >= partData[part + 1]!) continue;
    const band = part + PART_HEADER + bandOf(y, minY, partData[part + 2]!, partData[part + 3]!);
    const stop = block + partData[band + 1]!;
    let odd = false;
    for (let e = block + partData[band]!; e < stop; e += 4) {
      const yj = partData[e + 1]!;
      const yi = partData[e + 3]!;
      if (yi > y !== yj > y) {
        const xj = partData[e]!;
        const xi = partData[e + 2]!;
        if (x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
      }
    }
    if (odd) return true;
  }
  return false;
}

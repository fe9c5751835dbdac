import { buildCellGrid, COVERS, MISSES, PARTLY, type CellGrid } from './cell-grid.ts';
import { EARTH_RADIUS_M, haversineMetres, polygonParts, type FenceShape } from './fence-shape.ts';
import { packRTree } from './packed-rtree.ts';
import { INSIDE, MIXED, RASTER_SIZE, ROW_WORDS, rasterRows } from './part-raster.ts';

const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;
// Widens a circle's box beyond rounding error of its computation (~1e-14°); 1e-9° is 0.1 mm.
const BOX_PAD_DEG = 1e-9;
// Edges per horizontal band of a part, on average: a point tests the edges of one band instead of all.
const EDGES_PER_BAND = 2;

/** One geofence ready for packing: its box, and its closed rings or its circle. */
export interface CompiledFence {
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
  /** A polygon's parts as laid out in PackedFences.partData, offsets relative to the block's start. */
  block: Float64Array;
  raster: Uint32Array;
}

/**
 * Everything a query reads, in flat typed arrays, items in the tree's leaf order. A polygon part is cut
 * into horizontal bands of equal height; band b holds a copy of every edge whose latitude span meets it,
 * so a point casts its ray against the edges of its own band only (still even-odd over all rings of the
 * part), and reads them from one contiguous stretch of memory: a few cache lines per candidate.
 */
export interface PackedFences {
  n: number;
  topLevel: number;
  boxes: Float64Array;
  levelStart: Int32Array;
  levelCount: Int32Array;
  ids: Int32Array;
  /**
   * Item k's parts are at itemData[k] … itemData[k + 1] in partData (an empty range: a circle). A part is
   * [minY, maxY, bands per degree of latitude, bands, end of the part, start of band 0 … start of band
   * `bands` (the end)], then its edges, 4 numbers each (x1, y1, x2, y2), band by band; the end and the band
   * starts count from itemData[k].
   */
  itemData: Int32Array;
  partData: Float64Array;
  /**
   * Per item, RASTER_SIZE × ROW_WORDS words of its raster (part-raster.ts) over its box, and raster cells per degree
   * of longitude and of latitude. Small enough to stay in cache: most candidates end here.
   */
  rasters: Uint32Array;
  rasterScale: Float64Array;
  /** Per item: center latitude and longitude (radians), cos(center latitude), sin²(radius / 2R). */
  circles: Float64Array;
  stack: Int32Array;
  /** Leaf items by grid cell, when the geofences suit one (cell-grid.ts); the tree otherwise. */
  grid: CellGrid | undefined;
}

/** Numbers before a part's band starts: minY, maxY, bands per degree, bands, end. */
export const PART_HEADER = 5;

export function compileFence(shape: FenceShape): CompiledFence {
  if (!Number.isInteger(shape.id)) throw new TypeError(`geofence id must be an integer, got ${shape.id}`);
  if (shape.kind === 'circle') return compileCircle(shape.id, shape.lat, shape.lng, shape.radiusM);
  const values: number[] = [];
  const ringEnds: number[] = [];
  const partRings: number[] = [];
  for (const part of polygonParts(shape.geometry)) {
    for (const ring of part) {
      if (ring.length < 3) throw new TypeError(`geofence ${shape.id}: a ring needs at least 3 positions`);
      const first = values.length;
      for (const position of ring) values.push(Number(position[0]), Number(position[1]));
      if (values[first] !== values[values.length - 2] || values[first + 1] !== values[values.length - 1]) values.push(values[first]!, values[first + 1]!);
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
  // Bands and raster are made here, once per change of this geofence, so a rebuild only concatenates.
  let ring = 0;
  const parts: Array<Array<[number, number]>> = []; // each part's rings as [start, end) in coords
  const block: number[] = [];
  for (const ringCount of partRings) {
    const rings: Array<[number, number]> = [];
    for (let r = 0; r < ringCount; r++, ring++) rings.push([ring === 0 ? 0 : ringEnds[ring - 1]!, ringEnds[ring]!]);
    appendPart(block, coords, rings);
    parts.push(rings);
  }
  const raster = Uint32Array.from(rasterRows(coords, parts, box));
  return { id: shape.id, circle: false, box, coords, ringEnds, partRings, lat: 0, lng: 0, radiusM: 0, block: Float64Array.from(block), raster };
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
  return { id, circle: true, box, coords: new Float64Array(0), ringEnds: [], partRings: [], lat, lng, radiusM, block: new Float64Array(0), raster: new Uint32Array(0) };
}

/** The band of latitude y in a part; the query computes it the same way, so an edge is found where it is filed. */
export function bandOf(y: number, minY: number, scale: number, bands: number): number {
  const b = Math.floor((y - minY) * scale);
  return b < 0 ? 0 : b >= bands ? bands - 1 : b;
}

/** Lays the fences out for querying. Build time only: it allocates freely. */
export function packFences(fences: CompiledFence[], nodeSize: number): PackedFences {
  const n = fences.length;
  const items = new Float64Array(4 * n);
  fences.forEach((f, i) => items.set(f.box, 4 * i));
  const tree = packRTree(items, n, nodeSize);
  const ids = new Int32Array(n);
  const itemData = new Int32Array(n + 1);
  const circles = new Float64Array(4 * n);
  const rasters = new Uint32Array(RASTER_SIZE * ROW_WORDS * n);
  const rasterScale = new Float64Array(2 * n);
  let size = 0;
  for (const f of fences) size += f.block.length;
  const partData = new Float64Array(size);
  let at = 0;
  for (let k = 0; k < n; k++) {
    const f = fences[tree.order[k]!]!;
    ids[k] = f.id;
    itemData[k] = at;
    if (f.circle) {
      const half = Math.min(f.radiusM / EARTH_RADIUS_M, Math.PI) / 2;
      circles.set([f.lat * RAD, f.lng * RAD, Math.cos(f.lat * RAD), Math.sin(half) ** 2], 4 * k);
      continue;
    }
    partData.set(f.block, at);
    at += f.block.length;
    const [x0, y0, x1, y1] = f.box;
    rasters.set(f.raster, RASTER_SIZE * ROW_WORDS * k);
    rasterScale[2 * k] = x1 > x0 && y1 > y0 ? RASTER_SIZE / (x1 - x0) : 0;
    rasterScale[2 * k + 1] = x1 > x0 && y1 > y0 ? RASTER_SIZE / (y1 - y0) : 0;
  }
  itemData[n] = at;
  const topLevel = tree.levelCount.length - 1;
  // Deepest stack: every level below the root holding one full node of children, two numbers each.
  const stack = new Int32Array(2 * (nodeSize * (topLevel + 1) + 1));
  const grid = buildCellGrid(tree.boxes, n, (k, x0, y0, x1, y1) => classifyRect(tree.boxes, k, rasters, rasterScale, itemData, circles, x0, y0, x1, y1));
  return { n, topLevel, boxes: tree.boxes, levelStart: tree.levelStart, levelCount: tree.levelCount, ids, itemData, partData, rasters, rasterScale, circles, stack, grid };
}

function appendPart(data: number[], coords: Float64Array, rings: Array<[number, number]>): void {
  let minY = Infinity;
  let maxY = -Infinity;
  let edges = 0;
  for (const [s, e] of rings) {
    for (let i = s + 1; i < e; i += 2) {
      minY = Math.min(minY, coords[i]!);
      maxY = Math.max(maxY, coords[i]!);
    }
    edges += (e - s) / 2 - 1;
  }
  const bands = maxY > minY ? Math.max(1, Math.round(edges / EDGES_PER_BAND)) : 1;
  const scale = maxY > minY ? bands / (maxY - minY) : 0;
  const lists: number[][] = Array.from({ length: bands }, () => []);
  for (const [s, e] of rings) {
    for (let i = s; i + 2 < e; i += 2) {
      const [y0, y1] = [coords[i + 1]!, coords[i + 3]!];
      if (y0 === y1) continue; // a horizontal edge never crosses a horizontal ray
      const last = bandOf(Math.max(y0, y1), minY, scale, bands);
      for (let b = bandOf(Math.min(y0, y1), minY, scale, bands); b <= last; b++) lists[b]!.push(coords[i]!, y0, coords[i + 2]!, y1);
    }
  }
  const start = data.length;
  data.push(minY, maxY, scale, bands, 0);
  let at = start + PART_HEADER + bands + 1;
  for (const list of lists) {
    data.push(at);
    at += list.length;
  }
  data.push(at);
  for (const list of lists) for (const v of list) data.push(v);
  data[start + 4] = data.length;
}

/** Widening of a grid cell before it is classified, so rounding in the query's cell arithmetic never matters. */
const CELL_PAD = 1e-9;

/**
 * How item k's shape meets the rectangle [x0, x1] × [y0, y1] (longitude, latitude): a polygon by its
 * raster cells under the rectangle (all whole and inside: covers; all outside: misses), a circle by
 * the triangle inequality from the rectangle's center. Conservative: when unsure, "partly".
 */
function classifyRect(
  boxes: Float64Array, k: number, rasters: Uint32Array, rasterScale: Float64Array, itemData: Int32Array, circles: Float64Array,
  x0: number, y0: number, x1: number, y1: number,
): number {
  x0 -= CELL_PAD;
  y0 -= CELL_PAD;
  x1 += CELL_PAD;
  y1 += CELL_PAD;
  const b = 4 * k;
  const bx0 = boxes[b]!, by0 = boxes[b + 1]!, bx1 = boxes[b + 2]!, by1 = boxes[b + 3]!;
  if (x1 < bx0 || y1 < by0 || x0 > bx1 || y0 > by1) return MISSES;
  if (itemData[k] === itemData[k + 1]) {
    const q = 4 * k;
    const lat = circles[q]! / RAD, lng = circles[q + 1]! / RAD;
    const radius = 2 * Math.asin(Math.sqrt(circles[q + 3]!)) * EARTH_RADIUS_M;
    const centerLat = (y0 + y1) / 2, centerLng = (x0 + x1) / 2;
    const toCenter = haversineMetres(lat, lng, centerLat, centerLng);
    const halfDiagonal = 1.01 * Math.max(haversineMetres(centerLat, centerLng, y0, x0), haversineMetres(centerLat, centerLng, y1, x0));
    if (toCenter - halfDiagonal > radius) return MISSES;
    if (toCenter + halfDiagonal < radius) return COVERS;
    return PARTLY;
  }
  const sx = rasterScale[2 * k]!, sy = rasterScale[2 * k + 1]!;
  if (sx === 0 || sy === 0) return PARTLY;
  const within = x0 >= bx0 && y0 >= by0 && x1 <= bx1 && y1 <= by1;
  const last = RASTER_SIZE - 1;
  const c0 = Math.max(0, Math.min(last, Math.floor((Math.max(x0, bx0) - bx0) * sx)));
  const c1 = Math.max(0, Math.min(last, Math.floor((Math.min(x1, bx1) - bx0) * sx)));
  const r0 = Math.max(0, Math.min(last, Math.floor((Math.max(y0, by0) - by0) * sy)));
  const r1 = Math.max(0, Math.min(last, Math.floor((Math.min(y1, by1) - by0) * sy)));
  let inside = within;
  let outside = true;
  for (let r = r0; r <= r1; r++) {
    for (let c = c0; c <= c1; c++) {
      const code = (rasters[(k * RASTER_SIZE + r) * ROW_WORDS + (c >> 4)]! >>> ((c & 15) << 1)) & 3;
      if (code === MIXED) return PARTLY;
      if (code === INSIDE) outside = false;
      else inside = false;
    }
  }
  return outside ? MISSES : inside ? COVERS : PARTLY;
}

/**
 * A uniform grid over the leaf boxes of a packed R-tree: each cell lists the items whose box overlaps
 * it, so a query reads one short list instead of walking the tree. Worth it when geofences are many
 * and of similar size over a bounded area (a city's depots, stops and zones); built only when the
 * lists stay short, otherwise the tree answers alone.
 */
export interface CellGrid {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  /** Cells per degree. */
  scaleX: number;
  scaleY: number;
  cols: number;
  rows: number;
  /**
   * Cell (row * cols + col) lists items cellItems[cellStart[cell]] … cellItems[cellStart[cell + 1] - 1]:
   * only items whose shape may meet the cell; an item that covers the whole cell is stored as ~k
   * (negative), so a point there is inside it without another lookup.
   */
  cellStart: Int32Array;
  cellItems: Int32Array;
}

/** How an item's shape meets a rectangle: it misses it, it covers it whole, or only the exact test can tell. */
export const MISSES = -1;
export const PARTLY = 0;
export const COVERS = 1;
export type Classify = (item: number, x0: number, y0: number, x1: number, y1: number) => number;

const MAX_CELLS = 1 << 20;
/** Average list length past which the grid is not built (the tree is as good and smaller). */
const MAX_AVERAGE_LIST = 8;

/** A grid for the first `n` boxes (minX, minY, maxX, maxY each), or undefined when it would not pay. */
export function buildCellGrid(boxes: Float64Array, n: number, classify: Classify): CellGrid | undefined {
  if (n < 64) return undefined;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  const widths = new Float64Array(n);
  const heights = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const b = 4 * k;
    minX = Math.min(minX, boxes[b]!);
    minY = Math.min(minY, boxes[b + 1]!);
    maxX = Math.max(maxX, boxes[b + 2]!);
    maxY = Math.max(maxY, boxes[b + 3]!);
    widths[k] = boxes[b + 2]! - boxes[b]!;
    heights[k] = boxes[b + 3]! - boxes[b + 1]!;
  }
  // Cells a quarter of the median box: a typical geofence spans ~16–25 cells, a cell lists few.
  widths.sort();
  heights.sort();
  const cellW = Math.max(widths[n >> 1]! / 4, 1e-7);
  const cellH = Math.max(heights[n >> 1]! / 4, 1e-7);
  const cols = Math.max(1, Math.ceil((maxX - minX) / cellW));
  const rows = Math.max(1, Math.ceil((maxY - minY) / cellH));
  if (cols * rows > MAX_CELLS) return undefined;
  const scaleX = cols / Math.max(maxX - minX, 1e-12);
  const scaleY = rows / Math.max(maxY - minY, 1e-12);
  const col = (x: number) => Math.min(cols - 1, Math.max(0, Math.floor((x - minX) * scaleX)));
  const row = (y: number) => Math.min(rows - 1, Math.max(0, Math.floor((y - minY) * scaleY)));

  // Two passes over the boxes: count per cell, then fill.
  const cellStart = new Int32Array(cols * rows + 1);
  let entries = 0;
  for (let k = 0; k < n; k++) {
    const b = 4 * k;
    entries += (col(boxes[b + 2]!) - col(boxes[b]!) + 1) * (row(boxes[b + 3]!) - row(boxes[b + 1]!) + 1);
  }
  if (entries > 8 * MAX_CELLS) return undefined;
  // Each (item, cell) pair is classified once; the codes are kept for the fill pass.
  const codes = new Int8Array(entries);
  let at = 0;
  let listed = 0;
  for (let k = 0; k < n; k++) {
    const b = 4 * k;
    const c0 = col(boxes[b]!), c1 = col(boxes[b + 2]!), r0 = row(boxes[b + 1]!), r1 = row(boxes[b + 3]!);
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const x0 = minX + c / scaleX, y0 = minY + r / scaleY;
        const code = classify(k, x0, y0, x0 + 1 / scaleX, y0 + 1 / scaleY);
        codes[at++] = code;
        if (code === MISSES) continue;
        cellStart[r * cols + c + 1] = cellStart[r * cols + c + 1]! + 1;
        listed++;
      }
    }
  }
  let occupied = 0;
  for (let i = 1; i <= cols * rows; i++) if (cellStart[i]! > 0) occupied++;
  if (listed / Math.max(1, occupied) > MAX_AVERAGE_LIST) return undefined;
  for (let i = 1; i <= cols * rows; i++) cellStart[i] = cellStart[i]! + cellStart[i - 1]!;
  const fill = cellStart.slice(0, cols * rows);
  const cellItems = new Int32Array(listed);
  at = 0;
  for (let k = 0; k < n; k++) {
    const b = 4 * k;
    const c0 = col(boxes[b]!), c1 = col(boxes[b + 2]!), r0 = row(boxes[b + 1]!), r1 = row(boxes[b + 3]!);
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const code = codes[at++]!;
        if (code === MISSES) continue;
        const cell = r * cols + c;
        cellItems[fill[cell]!] = code === COVERS ? ~k : k;
        fill[cell] = fill[cell]! + 1;
      }
    }
  }
  return { minX, minY, maxX, maxY, scaleX, scaleY, cols, rows, cellStart, cellItems };
}

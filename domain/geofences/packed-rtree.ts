/**
 * A static packed R-tree over boxes, in typed arrays: leaves sorted along a Hilbert curve, each node the
 * bounding box of up to `nodeSize` consecutive nodes of the level below. Children are found by position
 * (node j of a level covers nodes j·nodeSize … of the level below), so no child pointers are stored.
 */
export interface PackedRTree {
  nodeSize: number;
  /** Box i of level l is at 4 × (levelStart[l] + i): minX, minY, maxX, maxY. Level 0 holds the leaves. */
  boxes: Float64Array;
  levelStart: Int32Array;
  levelCount: Int32Array;
  /** order[k] = the input item that became leaf k. */
  order: Int32Array;
}

const HILBERT_BITS = 16;
const HILBERT_MAX = (1 << HILBERT_BITS) - 1;

/** Position of (x, y) on a Hilbert curve filling a 2^16 × 2^16 grid (the classic quadrant-rotation walk). */
export function hilbertIndex(x: number, y: number): number {
  let d = 0;
  for (let s = 1 << (HILBERT_BITS - 1); s > 0; s >>>= 1) {
    const rx = (x & s) > 0 ? 1 : 0;
    const ry = (y & s) > 0 ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry === 0) {
      if (rx === 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      const t = x;
      x = y;
      y = t;
    }
    x &= s - 1;
    y &= s - 1;
  }
  return d;
}

/** Packs `n` boxes (4 numbers each in `items`) into a tree. Build time only: it allocates freely. */
export function packRTree(items: Float64Array, n: number, nodeSize = 16): PackedRTree {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, items[4 * i]!);
    minY = Math.min(minY, items[4 * i + 1]!);
    maxX = Math.max(maxX, items[4 * i + 2]!);
    maxY = Math.max(maxY, items[4 * i + 3]!);
  }
  const width = maxX - minX || 1;
  const height = maxY - minY || 1;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const cx = (items[4 * i]! + items[4 * i + 2]!) / 2;
    const cy = (items[4 * i + 1]! + items[4 * i + 3]!) / 2;
    keys[i] = hilbertIndex(Math.floor((HILBERT_MAX * (cx - minX)) / width), Math.floor((HILBERT_MAX * (cy - minY)) / height));
  }
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a]! - keys[b]!);

  // At least one level above the leaves, so a search always starts from a node.
  const counts = [n];
  do counts.push(Math.ceil(counts[counts.length - 1]! / nodeSize));
  while (counts[counts.length - 1]! > 1);
  const levelCount = Int32Array.from(counts);
  const levelStart = new Int32Array(counts.length);
  for (let l = 1; l < counts.length; l++) levelStart[l] = levelStart[l - 1]! + counts[l - 1]!;
  const total = counts.reduce((a, b) => a + b, 0);
  const boxes = new Float64Array(4 * total);

  for (let k = 0; k < n; k++) boxes.set(items.subarray(4 * order[k]!, 4 * order[k]! + 4), 4 * k);
  for (let l = 1; l < counts.length; l++) {
    const below = levelStart[l - 1]!;
    const belowCount = counts[l - 1]!;
    for (let j = 0; j < counts[l]!; j++) {
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -Infinity;
      let y1 = -Infinity;
      const end = Math.min((j + 1) * nodeSize, belowCount);
      for (let c = j * nodeSize; c < end; c++) {
        const b = 4 * (below + c);
        x0 = Math.min(x0, boxes[b]!);
        y0 = Math.min(y0, boxes[b + 1]!);
        x1 = Math.max(x1, boxes[b + 2]!);
        y1 = Math.max(y1, boxes[b + 3]!);
      }
      const b = 4 * (levelStart[l]! + j);
      boxes[b] = x0;
      boxes[b + 1] = y0;
      boxes[b + 2] = x1;
      boxes[b + 3] = y1;
    }
  }
  return { nodeSize, boxes, levelStart, levelCount, order };
}

/**
 * A coarse raster of one polygon geofence: its box cut into RASTER_SIZE × RASTER_SIZE cells, each known to be
 * wholly outside, wholly inside, or crossed by an edge (MIXED). A point in a whole cell is answered by one
 * lookup; only a point in a mixed cell casts its ray. Cells are 2-bit codes, 16 to a 32-bit word, row by row.
 */
export const RASTER_SIZE = 32;
/** 32-bit words per raster row: 16 cells of 2 bits each. */
export const ROW_WORDS = RASTER_SIZE / 16;
export const OUTSIDE = 0;
export const INSIDE = 1;
export const MIXED = 2;

/**
 * Row words (ROW_WORDS a row) of the raster of a polygon: its parts, each a list of rings as [start, end)
 * ranges of x, y pairs in `coords` (closed). A whole cell is inside when its center is inside a part
 * (even-odd over the part's rings). A cell is whole only when no edge comes within a small pad of it, so
 * rounding in the query's cell arithmetic (near 1e-14°) can never put a point in a whole cell it is not in.
 */
export function rasterRows(coords: Float64Array, parts: Array<Array<[number, number]>>, box: readonly [number, number, number, number]): number[] {
  const [minX, minY, maxX, maxY] = box;
  const n = RASTER_SIZE;
  const cells = new Uint8Array(n * n);
  if (!(maxX > minX && maxY > minY)) return Array.from({ length: n * ROW_WORDS }, () => 0xaaaaaaaa); // degenerate: all mixed
  const w = (maxX - minX) / n;
  const h = (maxY - minY) / n;
  const pad = 1e-6 * Math.min(w, h) + 1e-11;

  // Mixed: every cell the (padded) segment passes through, found row by row from the x-span of the
  // segment within the row's (padded) latitude span.
  for (const [s, e] of parts.flat()) {
    for (let i = s; i + 2 < e; i += 2) {
      const ax = coords[i]!;
      const ay = coords[i + 1]!;
      const bx = coords[i + 2]!;
      const by = coords[i + 3]!;
      const j0 = Math.max(0, Math.floor((Math.min(ay, by) - pad - minY) / h));
      const j1 = Math.min(n - 1, Math.floor((Math.max(ay, by) + pad - minY) / h));
      for (let j = j0; j <= j1; j++) {
        let [xa, xb] = [Math.min(ax, bx), Math.max(ax, bx)];
        if (ay !== by) {
          const ta = Math.min(1, Math.max(0, (minY + j * h - pad - ay) / (by - ay)));
          const tb = Math.min(1, Math.max(0, (minY + (j + 1) * h + pad - ay) / (by - ay)));
          [xa, xb] = [Math.min(ax + ta * (bx - ax), ax + tb * (bx - ax)), Math.max(ax + ta * (bx - ax), ax + tb * (bx - ax))];
        }
        const c0 = Math.max(0, Math.floor((xa - pad - minX) / w));
        const c1 = Math.min(n - 1, Math.floor((xb + pad - minX) / w));
        for (let c = c0; c <= c1; c++) cells[j * n + c] = MIXED;
      }
    }
  }

  // Where each row's center line crosses each part's edges, by the same rule as the query's ray casting
  // (an edge counts when one end is above the line and the other not), filed by row in one pass.
  const crossings: number[][][] = Array.from({ length: n }, () => parts.map(() => []));
  parts.forEach((rings, p) => {
    for (const [s, e] of rings) {
      for (let i = s; i + 2 < e; i += 2) {
        const xj = coords[i]!;
        const yj = coords[i + 1]!;
        const xi = coords[i + 2]!;
        const yi = coords[i + 3]!;
        if (yi === yj) continue;
        const r0 = Math.max(0, Math.floor((Math.min(yi, yj) - minY) / h - 0.5) - 1);
        const r1 = Math.min(n - 1, Math.ceil((Math.max(yi, yj) - minY) / h - 0.5) + 1);
        for (let j = r0; j <= r1; j++) {
          const yc = minY + (j + 0.5) * h;
          if (yi > yc !== yj > yc) crossings[j]![p]!.push(((xj - xi) * (yc - yi)) / (yj - yi) + xi);
        }
      }
    }
  });
  const rows: number[] = [];
  for (let j = 0; j < n; j++) {
    const row = crossings[j]!;
    for (const xs of row) xs.sort((a, b) => a - b);
    // Sweep left to right: a cell center is inside a part when an odd number of the part's crossings
    // lie to its right.
    const passed = new Int32Array(row.length);
    for (let word = 0; word < ROW_WORDS; word++) {
      let bits = 0;
      for (let k = 0; k < 16; k++) {
        const c = word * 16 + k;
        let code = cells[j * n + c]!;
        const xc = minX + (c + 0.5) * w;
        let inside = false;
        for (let p = 0; p < row.length; p++) {
          const xs = row[p]!;
          let q = passed[p]!;
          while (q < xs.length && xs[q]! <= xc) q++;
          passed[p] = q;
          if ((xs.length - q) % 2 === 1) inside = true;
        }
        if (code !== MIXED) code = inside ? INSIDE : OUTSIDE;
        bits |= code << (2 * k);
      }
      rows.push(bits >>> 0);
    }
  }
  return rows;
}

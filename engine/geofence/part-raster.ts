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

/** Cell of `v` along an axis; the query computes it the same way. */
export function cellOf(v: number, min: number, scale: number): number {
  return Math.floor((v - min) * scale);
}

/**
 * Row words (ROW_WORDS a row) of the raster of a polygon: its parts, each a list of rings as [start, end) ranges of x, y pairs
 * in `coords` (closed). A whole cell is inside when its center is inside a part (even-odd over the part's rings).
 * A cell is whole only when no edge comes within a small pad of it, so rounding in the query's cell
 * arithmetic (near 1e-14°) can never put a point in a whole cell it is not in.
 */
export function rasterRows(coords: Float64Array, parts: Array<Array<[number, number]>>, box: readonly [number, number, number, number]): number[] {
  const [minX, minY, maxX, maxY] = box;
  const n = RASTER_SIZE;
  const cells = new Uint8Array(n * n);
  if (!(maxX > minX && maxY > minY)) return Array.from({ length: n * ROW_WORDS }, () => 0xaaaaaaaa); // degenerate: all mixed
  const w = (maxX - minX) / n;
  const h = (maxY - minY) / n;
  const pad = 1e-6 * Math.min(w, h) + 1e-11;

  for (const [s, e] of parts.flat()) {
    for (let i = s; i + 2 < e; i += 2) {
      const [ax, ay, bx, by] = [coords[i]!, coords[i + 1]!, coords[i + 2]!, coords[i + 3]!];
      const i0 = Math.max(0, Math.floor((Math.min(ax, bx) - pad - minX) / w));
      const i1 = Math.min(n - 1, Math.floor((Math.max(ax, bx) + pad - minX) / w));
      const j0 = Math.max(0, Math.floor((Math.min(ay, by) - pad - minY) / h));
      const j1 = Math.min(n - 1, Math.floor((Math.max(ay, by) + pad - minY) / h));
      for (let j = j0; j <= j1; j++) {
        for (let c = i0; c <= i1; c++) {
          const [x0, y0] = [minX + c * w - pad, minY + j * h - pad];
          const [x1, y1] = [minX + (c + 1) * w + pad, minY + (j + 1) * h + pad];
          if (segmentMeetsBox(ax, ay, bx, by, x0, y0, x1, y1)) cells[j * n + c] = MIXED;
        }
      }
    }
  }

  const rows: number[] = [];
  for (let j = 0; j < n; j++) {
    // Where the row's center line crosses each part's edges, by the same rule as the query's ray casting.
    const yc = minY + (j + 0.5) * h;
    const crossings = parts.map((rings) => {
      const xs: number[] = [];
      for (const [s, e] of rings) {
        for (let i = s; i + 2 < e; i += 2) {
          const [xj, yj, xi, yi] = [coords[i]!, coords[i + 1]!, coords[i + 2]!, coords[i + 3]!];
          if (yi > yc !== yj > yc) xs.push(((xj - xi) * (yc - yi)) / (yj - yi) + xi);
        }
      }
      return xs;
    });
    for (let word = 0; word < ROW_WORDS; word++) {
      let bits = 0;
      for (let k = 0; k < 16; k++) {
        const c = word * 16 + k;
        let code = cells[j * n + c]!;
        if (code !== MIXED) {
          const xc = minX + (c + 0.5) * w;
          code = crossings.some((xs) => xs.filter((x) => xc < x).length % 2 === 1) ? INSIDE : OUTSIDE;
        }
        bits |= code << (2 * k);
      }
      rows.push(bits >>> 0);
    }
  }
  return rows;
}

/** Whether segment a–b meets the closed box [x0, x1] × [y0, y1]: box overlap, and corners not all on one side. */
function segmentMeetsBox(ax: number, ay: number, bx: number, by: number, x0: number, y0: number, x1: number, y1: number): boolean {
  if (Math.max(ax, bx) < x0 || Math.min(ax, bx) > x1 || Math.max(ay, by) < y0 || Math.min(ay, by) > y1) return false;
  const [dx, dy] = [bx - ax, by - ay];
  const side = (x: number, y: number) => Math.sign(dx * (y - ay) - dy * (x - ax));
  const s = side(x0, y0) + side(x1, y0) + side(x0, y1) + side(x1, y1);
  return Math.abs(s) !== 4;
}

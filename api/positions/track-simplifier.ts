/**
 * Douglas–Peucker in metres for GPS tracks: the points a map needs to draw the track within
 * `toleranceM` of every fix left out. Distances are measured on a local plane around each segment
 * under test (equirectangular, scaled by the cosine of the segment's mid latitude), which stays within
 * a fraction of a percent of the geodesic distance for segments up to a few hundred kilometres, and
 * from a fix to the *segment* (not its infinite line), so a vehicle that drives out and back is not
 * folded onto one line. Longitude differences are wrapped, so a track across the antimeridian works.
 */

const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/** Longitude difference in degrees, wrapped into [-180, 180). */
function deltaLng(a: number, b: number): number {
  let d = a - b;
  if (d >= 180) d -= 360;
  else if (d < -180) d += 360;
  return d;
}

/**
 * Indices of the points to keep, ascending; the first and last are always kept. `lat` and `lng` are
 * in degrees, of equal length. An explicit stack instead of recursion: a million-point track cannot
 * overflow the call stack. Typical tracks cost O(n log n); a pathological one (every split at an end)
 * O(n²).
 */
export function simplifyTrack(lat: ArrayLike<number>, lng: ArrayLike<number>, toleranceM: number): Uint32Array {
  const n = lat.length;
  if (n !== lng.length) throw new RangeError(`lat and lng differ in length (${n} and ${lng.length})`);
  if (!(toleranceM >= 0)) throw new RangeError(`toleranceM must be 0 or more, got ${toleranceM}`);
  if (n <= 2) return Uint32Array.from({ length: n }, (_, i) => i);

  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  const tolerance2 = toleranceM * toleranceM;
  const stack = new Uint32Array(2 * n);
  let top = 0;
  stack[top++] = 0;
  stack[top++] = n - 1;

  while (top > 0) {
    const last = stack[--top]!;
    const first = stack[--top]!;
    if (last - first < 2) continue;

    // Plane centred on the segment's first point; metres per degree along each axis.
    const lat0 = lat[first]!;
    const lng0 = lng[first]!;
    const ky = EARTH_RADIUS_M * RAD;
    const kx = ky * Math.cos(((lat0 + lat[last]!) / 2) * RAD);
    const bx = deltaLng(lng[last]!, lng0) * kx;
    const by = (lat[last]! - lat0) * ky;
    const length2 = bx * bx + by * by;

    let farthest = -1;
    let max2 = tolerance2;
    for (let i = first + 1; i < last; i++) {
      const px = deltaLng(lng[i]!, lng0) * kx;
      const py = (lat[i]! - lat0) * ky;
      let dx = px;
      let dy = py;
      if (length2 > 0) {
        const t = (px * bx + py * by) / length2;
        if (t >= 1) {
          dx = px - bx;
          dy = py - by;
        } else if (t > 0) {
          dx = px - t * bx;
          dy = py - t * by;
        }
      }
      const d2 = dx * dx + dy * dy;
      if (d2 > max2) {
        max2 = d2;
        farthest = i;
      }
    }
    if (farthest < 0) continue;
    keep[farthest] = 1;
    stack[top++] = first;
    stack[top++] = farthest;
    stack[top++] = farthest;
    stack[top++] = last;
  }

  let kept = 0;
  for (let i = 0; i < n; i++) kept += keep[i]!;
  const indices = new Uint32Array(kept);
  for (let i = 0, k = 0; i < n; i++) if (keep[i]) indices[k++] = i;
  return indices;
}

/**
 * The fixes a simplified track keeps: the valid ones only (an invalid fix repeats a stale or empty
 * position, which is no point of the track), thinned to `toleranceM`, the first and last valid fix kept.
 */
export function simplifyFixes<T extends { valid: boolean; latitude: number; longitude: number }>(fixes: T[], toleranceM: number): T[] {
  const valid = fixes.filter((f) => f.valid);
  const kept = simplifyTrack(valid.map((f) => f.latitude), valid.map((f) => f.longitude), toleranceM);
  return Array.from(kept, (i) => valid[i]!);
}

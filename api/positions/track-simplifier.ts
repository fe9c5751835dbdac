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

/** A track whose simplification would take more distance tests than allowed (a pathological shape). */
export class TrackTooIntricateError extends Error {
  override name = 'TrackTooIntricateError';
}

/**
 * One simplification, runnable in slices so a long track never holds the event loop: the work is an
 * explicit stack of segments, so it can stop between any two segments and go on later. An explicit
 * stack instead of recursion also means a million-point track cannot overflow the call stack.
 * Typical tracks cost O(n log n) distance tests; a pathological one (every split at an end) O(n²),
 * which `maxTests` bounds.
 */
export class TrackSimplification {
  private readonly keep: Uint8Array;
  private readonly stack: Uint32Array;
  private top = 0;
  /** Points marked kept so far, so `kept()` needs one pass over the marks, not two. */
  private count = 0;
  private readonly tolerance2: number;
  /** Point-to-segment distance tests made so far. */
  tests = 0;

  constructor(
    private readonly lat: ArrayLike<number>,
    private readonly lng: ArrayLike<number>,
    toleranceM: number,
    private readonly maxTests = Infinity,
  ) {
    const n = lat.length;
    if (n !== lng.length) throw new RangeError(`lat and lng differ in length (${n} and ${lng.length})`);
    if (!(toleranceM >= 0)) throw new RangeError(`toleranceM must be 0 or more, got ${toleranceM}`);
    this.tolerance2 = toleranceM * toleranceM;
    this.keep = new Uint8Array(n);
    this.stack = new Uint32Array(Math.max(2, 2 * n));
    if (n === 0) return;
    this.keep[0] = 1;
    this.keep[n - 1] = 1;
    this.count = n === 1 ? 1 : 2;
    if (n <= 2) return;
    this.stack[this.top++] = 0;
    this.stack[this.top++] = n - 1;
  }

  /** Works until done (true) or until `performance.now()` passes `deadline` (false: call again). */
  runUntil(deadline: number): boolean {
    const { lat, lng, keep, stack, tolerance2 } = this;
    let top = this.top;
    let segments = 0;
    let sinceClock = 0;
    while (top > 0) {
      // The clock is read every few short segments (reading it costs more than one does), and after
      // every ~100,000 distance tests (a millisecond or so) however long the segments are.
      if (((++segments & 63) === 0 || sinceClock > 100_000) && performance.now() > deadline) break;
      if (sinceClock > 100_000) sinceClock = 0;
      const last = stack[--top]!;
      const first = stack[--top]!;
      if (last - first < 2) continue;
      sinceClock += last - first - 1;
      this.tests += last - first - 1;
      if (this.tests > this.maxTests) {
        this.top = 0;
        throw new TrackTooIntricateError(`simplifying the track would take more than ${this.maxTests} distance tests`);
      }

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
      this.count++;
      stack[top++] = first;
      stack[top++] = farthest;
      stack[top++] = farthest;
      stack[top++] = last;
    }
    this.top = top;
    return top === 0;
  }

  /** Indices of the points kept, ascending; the first and last are always kept. */
  kept(): Uint32Array {
    const { keep } = this;
    const indices = new Uint32Array(this.count);
    for (let i = 0, k = 0; k < indices.length; i++) if (keep[i]) indices[k++] = i;
    return indices;
  }
}

/** Indices of the points to keep, ascending, in one go: for tracks small enough not to hold the event loop (a page). */
export function simplifyTrack(lat: ArrayLike<number>, lng: ArrayLike<number>, toleranceM: number): Uint32Array {
  const simplification = new TrackSimplification(lat, lng, toleranceM);
  simplification.runUntil(Infinity);
  return simplification.kept();
}

/** Lets the event loop run between slices of at most `sliceMs` until `simplification` is done. */
async function runInSlices(simplification: TrackSimplification, sliceMs: number): Promise<void> {
  while (!simplification.runUntil(performance.now() + sliceMs)) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * The same, for a track of any size on a server: in slices of at most `sliceMs`, letting the event
 * loop run other requests between them, and refused (TrackTooIntricateError) past `maxTests`.
 */
export async function simplifyTrackInSlices(
  lat: ArrayLike<number>,
  lng: ArrayLike<number>,
  toleranceM: number,
  options: { sliceMs?: number; maxTests?: number } = {},
): Promise<Uint32Array> {
  const simplification = new TrackSimplification(lat, lng, toleranceM, options.maxTests);
  await runInSlices(simplification, options.sliceMs ?? 20);
  return simplification.kept();
}

/**
 * Each run of `chunk` points simplified on its own, the points where runs meet kept: every point left
 * out is still within the tolerance of the line kept, at a cost of at most `chunk` distance tests per
 * point whatever the shape. For tracks whose whole simplification would cost too much; a few more
 * points are kept than the whole would keep.
 */
export async function simplifyTrackInChunks(
  lat: ArrayLike<number>,
  lng: ArrayLike<number>,
  toleranceM: number,
  options: { chunk?: number; sliceMs?: number } = {},
): Promise<Uint32Array> {
  const n = lat.length;
  const chunk = Math.max(2, options.chunk ?? 2_000);
  const keep = new Uint8Array(n);
  for (let start = 0; start < n - 1 || start === 0; start += chunk - 1) {
    const end = Math.min(n, start + chunk);
    const part = new TrackSimplification(
      Array.prototype.slice.call(lat, start, end) as number[],
      Array.prototype.slice.call(lng, start, end) as number[],
      toleranceM,
    );
    await runInSlices(part, options.sliceMs ?? 20);
    for (const i of part.kept()) keep[start + i] = 1;
    if (end === n) break;
  }
  let count = 0;
  for (let i = 0; i < n; i++) count += keep[i]!;
  const indices = new Uint32Array(count);
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

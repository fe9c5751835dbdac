import type { Crossing, DwellRules, EvaluatedFix } from './fence-crossings.ts';
import type { GeofenceIndex } from './geofence-index.ts';

/** A fix of the window, in fix-time order: evaluated in order earlier, or one that arrived late. */
export interface WindowFix extends EvaluatedFix {
  late: boolean;
}

/** A stored enter or exit: the timeline the evaluation in order recorded. */
export interface StoredCrossing {
  geofenceId: number;
  type: 'enter' | 'exit';
  fixTime: number;
}

/** Two crossings a late run of fixes adds: into the observed state, and back. */
export interface Excursion {
  geofenceId: number;
  into: Crossing;
  back: Crossing;
}

interface Run {
  first: WindowFix;
  /** The fix before the run, which agreed with the stored timeline (−∞: the window's start; NaN: it did not). */
  since: number;
}

function insideOf(index: GeofenceIndex, lat: number, lng: number, scratch: { out: Int32Array }): Set<number> {
  let n = index.query(lat, lng, scratch.out);
  if (n > scratch.out.length) {
    scratch.out = new Int32Array(2 * n);
    n = index.query(lat, lng, scratch.out);
  }
  return new Set(scratch.out.subarray(0, n));
}

/**
 * The crossings that fixes arriving late reveal, given the stored timeline, as a pure function: the
 * same inputs give the same excursions, and once they are stored the timeline agrees with every fix
 * and nothing more comes out (so a late fix processed twice adds nothing).
 *
 * Recorded crossings may already have been delivered, so they are never moved or removed: a late fix
 * may only add what the evaluation in order missed. For each geofence, a run of consecutive late fixes
 * whose membership differs from the stored timeline (inside where it says outside, or the reverse),
 * between two fixes that agree with it and with no stored crossing of that geofence in between, is an
 * excursion: a crossing into the observed state at the run's first fix and one back at the first fix
 * after the run. A run next to a stored crossing only says that crossing happened earlier than
 * recorded: nothing is added. A geofence with a dwell time is left alone (an excursion shorter than the
 * dwell would not have counted, and a longer one would need the whole debounce history), as is one
 * whose evaluated fixes no longer agree with the timeline (it was moved since).
 *
 * `insideAtStart` is the stored membership just before the window's first fix; `stored` the stored
 * crossings within the window, in time order.
 */
export function lateExcursions(
  index: GeofenceIndex | undefined,
  dwell: DwellRules,
  insideAtStart: ReadonlySet<number>,
  stored: readonly StoredCrossing[],
  fixes: readonly WindowFix[],
): Excursion[] {
  if (!index || !fixes.some((f) => f.late)) return [];
  const storedInside = new Set(insideAtStart);
  const lastStored = new Map<number, number>();
  const runs = new Map<number, Run>();
  let previousTime = Number.NEGATIVE_INFINITY;
  // Geofences whose membership at the previous fix differed from the stored timeline.
  let disagreed = new Set<number>();
  const excursions: Excursion[] = [];
  const scratch = { out: new Int32Array(16) };
  let next = 0;
  for (const fix of fixes) {
    for (; next < stored.length && stored[next]!.fixTime <= fix.fixTime; next++) {
      const c = stored[next]!;
      if (c.type === 'enter') storedInside.add(c.geofenceId);
      else storedInside.delete(c.geofenceId);
      lastStored.set(c.geofenceId, c.fixTime);
    }
    if (!fix.valid) continue;
    const observed = insideOf(index, fix.latitude, fix.longitude, scratch);
    const geofences = new Set([...storedInside, ...observed, ...runs.keys()]);
    const disagreeing = new Set<number>();
    for (const id of geofences) {
      if (dwell.has(id) || !index.has(id)) continue;
      const agrees = observed.has(id) === storedInside.has(id);
      const run = runs.get(id);
      if (!agrees) {
        disagreeing.add(id);
        // An evaluated fix the timeline no longer explains (the geofence moved since): nothing next to
        // it can be reasoned about.
        if (!fix.late) runs.delete(id);
        else if (!run) runs.set(id, { first: fix, since: disagreed.has(id) ? Number.NaN : previousTime });
        continue;
      }
      if (run) {
        runs.delete(id);
        const touched = lastStored.get(id);
        if (!Number.isNaN(run.since) && (touched === undefined || touched <= run.since)) {
          const into = observed.has(id) ? 'exit' : 'enter';
          excursions.push({
            geofenceId: id,
            into: { geofenceId: id, type: into, fixTime: run.first.fixTime, latitude: run.first.latitude, longitude: run.first.longitude },
            back: { geofenceId: id, type: into === 'enter' ? 'exit' : 'enter', fixTime: fix.fixTime, latitude: fix.latitude, longitude: fix.longitude },
          });
        }
      }
    }
    disagreed = disagreeing;
    previousTime = fix.fixTime;
  }
  return excursions.sort((a, b) => a.into.fixTime - b.into.fixTime || a.geofenceId - b.geofenceId);
}

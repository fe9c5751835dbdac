import { haversineMetres } from '../geofences/fence-shape.ts';

/**
 * The server's own odometer and engine hours of a vehicle (docs/engine.md, "Odometer and engine
 * hours"): counted from its fixes in fix-time order, so a replay decides the same and the state is
 * committed with the engine's cursor.
 */

/** A parked vehicle's fixes scatter around where it stands; a still fix this close to the anchor is that scatter. */
export const JITTER_RADIUS_M = 50;
/** A leg faster than this is a bad fix (a jump across the map and back), not a journey: it counts nothing. */
export const MAX_PLAUSIBLE_KMH = 250;

export interface AccumulatorRules {
  /** A fix at this speed or faster is moving (`MOVING_SPEED_KMH`). */
  movingSpeedKmh: number;
  /** Silence longer than this is a gap (`TRIP_MAX_GAP_S`): no engine time, only a plausible straight line. */
  maxGapS: number;
}

export interface AccumulatorFix {
  /** Fix time, ms. */
  t: number;
  valid: boolean;
  lat: number;
  lng: number;
  speedKmh: number | null;
  ignition: boolean | null;
}

interface Place {
  t: number;
  lat: number;
  lng: number;
}

/** The accumulators' memory between evaluations: plain JSON, stored with the engine cursor. */
export interface AccumulatorState {
  /** Metres counted since the server started counting for this vehicle. */
  odometerM: number;
  /** Seconds with the ignition on since then. */
  engineS: number;
  /** Where the odometer has counted up to, and whether the fix there was moving; null before the first valid fix. */
  anchor: (Place & { moving: boolean }) | null;
  /** A still fix beyond the jitter radius, waiting for the next to tell a departure from a stray fix. */
  pending: Place | null;
  /** The last fix of any kind (valid or not: the ignition does not need a GPS fix), and the ignition then in effect. */
  last: { t: number; ignition: boolean | null } | null;
}

export const EMPTY_ACCUMULATOR_STATE: AccumulatorState = { odometerM: 0, engineS: 0, anchor: null, pending: null, last: null };

/** Reads a stored state; a missing or foreign one starts from zero. */
export function accumulatorState(stored: Record<string, unknown> | null): AccumulatorState {
  if (!stored || typeof stored.odometerM !== 'number' || typeof stored.engineS !== 'number') return EMPTY_ACCUMULATOR_STATE;
  return stored as unknown as AccumulatorState;
}

/**
 * Advances the accumulators over fixes in fix-time order; `odometerAt[i]` receives the odometer (m)
 * right after fix i, for the trips to measure themselves by. A fix not after the last one counted (a
 * resend) changes nothing.
 *
 * Distance (valid fixes only):
 * - A leg with either end moving (by the reported speed) counts its great-circle length: driving,
 *   pulling away or coming to a halt.
 * - Between still fixes the anchor stays where the vehicle stopped; scatter within JITTER_RADIUS_M of
 *   it counts nothing. A still fix beyond it counts only once the next fix is beyond it too (the
 *   vehicle crept away, or a tracker without speed drives slowly), and then the whole way through
 *   it; one that the next fix contradicts was a stray fix and counts nothing.
 * - After a gap longer than `maxGapS`, the straight line from where the vehicle was counts if it is
 *   beyond the jitter radius: what it covered unseen is at least that.
 * - A leg implying more than MAX_PLAUSIBLE_KMH counts nothing (the anchor moves on, so one bad fix
 *   costs at most its two legs).
 *
 * Engine time: each interval of up to `maxGapS` between consecutive fixes counts when the ignition
 * the earlier fix left in effect was on; a longer silence counts nothing (the tracker may have lost
 * power with the engine). A fix that reports no ignition keeps the last one reported.
 */
export function accumulate(
  prior: AccumulatorState,
  rules: AccumulatorRules,
  fixes: readonly AccumulatorFix[],
  odometerAt?: Float64Array,
): AccumulatorState {
  const state: AccumulatorState = structuredClone(prior);
  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i]!;
    const last = state.last;
    if (last === null || f.t > last.t) {
      if (last !== null && last.ignition === true && (f.t - last.t) / 1000 <= rules.maxGapS) state.engineS += (f.t - last.t) / 1000;
      state.last = { t: f.t, ignition: f.ignition ?? last?.ignition ?? null };
      if (f.valid) countDistance(state, rules, f);
    }
    if (odometerAt) odometerAt[i] = state.odometerM;
  }
  return state;
}

function countDistance(state: AccumulatorState, rules: AccumulatorRules, f: AccumulatorFix): void {
  const moving = (f.speedKmh ?? 0) >= rules.movingSpeedKmh;
  const anchor = state.anchor;
  const here = { t: f.t, lat: f.lat, lng: f.lng, moving };
  if (anchor === null) {
    state.anchor = here;
    return;
  }
  const pending = state.pending;
  const sinceLast = (f.t - (pending ?? anchor).t) / 1000;
  if (sinceLast > rules.maxGapS) {
    const d = metres(anchor, f);
    if (d > JITTER_RADIUS_M && plausible(d, f.t - anchor.t)) state.odometerM += d;
    state.anchor = here;
    state.pending = null;
    return;
  }
  if (moving || anchor.moving) {
    state.odometerM += pending ? leg(anchor, pending) + leg(pending, f) : leg(anchor, f);
    state.anchor = here;
    state.pending = null;
    return;
  }
  if (metres(anchor, f) <= JITTER_RADIUS_M) {
    // Back within the radius: a pending fix beyond it was a stray one.
    state.pending = null;
  } else if (pending) {
    state.odometerM += leg(anchor, pending) + leg(pending, f);
    state.anchor = here;
    state.pending = null;
  } else {
    state.pending = { t: f.t, lat: f.lat, lng: f.lng };
  }
}

const metres = (a: { lat: number; lng: number }, b: { lat: number; lng: number }) => haversineMetres(a.lat, a.lng, b.lat, b.lng);

/** Metres over ms within the plausible speed (a leg of no time is plausible only if it is no leg). */
const plausible = (m: number, ms: number) => m * 3600 <= MAX_PLAUSIBLE_KMH * Math.max(ms, 0);

/** A leg's length, or nothing if no vehicle could have driven it. */
function leg(a: Place, b: Place): number {
  const d = metres(a, b);
  return plausible(d, b.t - a.t) ? d : 0;
}

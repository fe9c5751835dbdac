import { haversineMetres } from '../geofences/fence-shape.ts';

/**
 * Fuel refills and drops from the fuel level trackers report (docs/engine.md, "Fuel"): a pure function
 * of the state and the fixes in fix-time order, so a replay decides the same and the state is
 * committed with the engine's cursor.
 *
 * - Level: the tracker's percentage (`fuel`, 0 to 100), else its litres (`fuelVolume`) over the
 *   vehicle's tank capacity. A `fuel` outside 0 to 100 is an uncalibrated sensor's raw output, not a
 *   percentage: it is not read.
 * - Smoothing: the level compared is the median of the last SMOOTHING_READINGS readings (at least
 *   MIN_READINGS), so sloshing and single jumps of the sensor change nothing.
 * - Parked: a still fix (speed below the moving speed). A still stretch is a *stop* when the ignition
 *   was reported off in it or it lasted TRIP_MIN_STOP_S; shorter halts with the engine on (traffic) are
 *   not.
 * - Reference: while the vehicle drives, the reference level follows the smoothed level (consumption is
 *   no event). From the first still fix it is held, and the smoothed level is compared with it while
 *   parked and, after a stop, for the next SMOOTHING_READINGS readings of the drive (a tracker that
 *   reports seldom while parked may show a refill only once the vehicle moves again).
 * - A rise beyond `refillMinPercent` is a refill; a fall beyond `dropMinPercent` is a drop. It is logged
 *   once the level has settled (SETTLE_READINGS readings in a row going no further than
 *   SETTLE_BAND_PERCENT beyond the first of them), or when the
 *   readings after a stop run out; from the reference to the furthest smoothed level. The reference then
 *   moves there, so one change logs one event.
 * - A silence longer than TRIP_MAX_GAP_S starts the readings afresh unless the vehicle is still parked
 *   where it was (within PARKED_RADIUS_M): what it did unseen may have been driving.
 */

/** Readings the median is taken over: two stray readings in five move nothing. */
export const SMOOTHING_READINGS = 5;
/** Readings needed before the smoothed level counts. */
export const MIN_READINGS = 3;
/** Readings in a row that go no further (by more than SETTLE_BAND_PERCENT) before a change is logged. */
export const SETTLE_READINGS = SMOOTHING_READINGS;
export const SETTLE_BAND_PERCENT = 1;
/** A vehicle silent for longer than the gap but seen again this close to where it was has stayed parked. */
export const PARKED_RADIUS_M = 50;

export interface FuelRules {
  /** A rise of the smoothed level beyond this many percentage points is a refill (`FUEL_REFILL_MIN_PERCENT`). */
  refillMinPercent: number;
  /** A fall beyond this many percentage points, parked, is a drop (`FUEL_DROP_MIN_PERCENT`). */
  dropMinPercent: number;
  /** A fix at this speed or faster is moving (`MOVING_SPEED_KMH`). */
  movingSpeedKmh: number;
  /** A still stretch this long is a stop even with the ignition on (`TRIP_MIN_STOP_S`). */
  minStopS: number;
  /** Silence longer than this breaks the readings, unless the vehicle stayed parked (`TRIP_MAX_GAP_S`). */
  maxGapS: number;
}

export const DEFAULT_FUEL_RULES: FuelRules = { refillMinPercent: 10, dropMinPercent: 8, movingSpeedKmh: 5, minStopS: 300, maxGapS: 3600 };

export interface FuelFix {
  /** Fix time, ms. */
  t: number;
  lat: number;
  lng: number;
  speedKmh: number | null;
  heading: number | null;
  ignition: boolean | null;
  /** The tracker's fuel level in percent (`fuel`), as reported. */
  fuelPercent: number | null;
  /** The tracker's fuel volume in litres (`fuelVolume`), as reported. */
  fuelLitres: number | null;
}

/** Where a change is placed: the last still fix at or before it was seen. */
export interface FuelPlace {
  t: number;
  lat: number;
  lng: number;
  speedKmh: number | null;
  heading: number | null;
}

export interface FuelChange {
  kind: 'refill' | 'drop';
  at: FuelPlace;
  fromPercent: number;
  toPercent: number;
  amountPercent: number;
  /** The amount over the vehicle's tank capacity; null without one. */
  amountLitres: number | null;
}

/** The detector's memory between batches: plain JSON, stored with the engine cursor. */
export interface FuelState {
  /** The last readings in percent, oldest first (at most SMOOTHING_READINGS). */
  readings: number[];
  /** The last fix seen (any fix, reading or not), and where it was. */
  last: { t: number; lat: number; lng: number } | null;
  /** The current still stretch: when it began and whether it is a stop yet; null while driving. */
  still: { since: number; stop: boolean } | null;
  /** The level changes are measured from; null until the smoothed level counts. */
  ref: number | null;
  /** Readings of the drive still compared with the reference after a stop. */
  tail: number;
  /** The last place parked, where a change is placed. */
  parkedAt: FuelPlace | null;
  /** A change past its threshold that has not settled yet. */
  change: { kind: 'refill' | 'drop'; at: FuelPlace; extreme: number; quiet: number; quietFrom: number } | null;
}

export const EMPTY_FUEL_STATE: FuelState = { readings: [], last: null, still: null, ref: null, tail: 0, parkedAt: null, change: null };

/** Reads a stored state; a missing or foreign one is null (a vehicle never seen with a fuel reading). */
export function fuelState(stored: Record<string, unknown> | null | undefined): FuelState | null {
  if (!stored || !Array.isArray(stored.readings)) return null;
  return stored as unknown as FuelState;
}

/** The fix's level in percent: the tracker's percentage, else its litres over the tank; null when it tells none. */
export function fuelLevelPercent(f: Pick<FuelFix, 'fuelPercent' | 'fuelLitres'>, tankLitres: number | null): number | null {
  const p = f.fuelPercent;
  if (p !== null && Number.isFinite(p) && p >= 0 && p <= 100) return p;
  const l = f.fuelLitres;
  if (l !== null && tankLitres !== null && tankLitres > 0 && Number.isFinite(l) && l >= 0) return Math.min(100, (l / tankLitres) * 100);
  return null;
}

/**
 * Runs the detector over fixes in fix-time order; the changes found are appended to `out`. Returns the
 * new state, or null when the vehicle has never reported a level (its fixes then cost one check each).
 * A fix not after the last one seen (a resend) changes nothing.
 */
export function detectFuelChanges(
  prior: FuelState | null,
  rules: FuelRules,
  tankLitres: number | null,
  fixes: readonly FuelFix[],
  out: FuelChange[],
): FuelState | null {
  let first = -1;
  if (prior === null) {
    first = fixes.findIndex((f) => fuelLevelPercent(f, tankLitres) !== null);
    if (first < 0) return null;
  }
  const state = copyState(prior ?? EMPTY_FUEL_STATE);
  for (let i = Math.max(first, 0); i < fixes.length; i++) {
    const f = fixes[i]!;
    if (state.last !== null && f.t <= state.last.t) continue;
    step(state, rules, tankLitres, f, out);
  }
  return state;
}

function step(state: FuelState, rules: FuelRules, tankLitres: number | null, f: FuelFix, out: FuelChange[]): void {
  const last = state.last;
  const moving = (f.speedKmh ?? 0) >= rules.movingSpeedKmh;
  if (last !== null && (f.t - last.t) / 1000 > rules.maxGapS) {
    const stayed = !moving && state.still !== null && haversineMetres(last.lat, last.lng, f.lat, f.lng) <= PARKED_RADIUS_M;
    if (!stayed) restart(state, tankLitres, out);
  }
  state.last = { t: f.t, lat: f.lat, lng: f.lng };

  if (moving) {
    const was = state.still;
    if (was !== null) {
      const stop = was.stop || (f.t - was.since) / 1000 >= rules.minStopS;
      // After a stop (or a halt where a change began), the drive's first readings still tell what happened while parked.
      if (stop || state.change !== null) state.tail = SMOOTHING_READINGS;
      state.still = null;
    }
  } else {
    if (state.still === null) state.still = { since: f.t, stop: false };
    if (f.ignition === false || (f.t - state.still.since) / 1000 >= rules.minStopS) state.still.stop = true;
    state.parkedAt = { t: f.t, lat: f.lat, lng: f.lng, speedKmh: f.speedKmh, heading: f.heading };
  }

  const level = fuelLevelPercent(f, tankLitres);
  if (level === null) return;
  const readings = state.readings;
  readings.push(level);
  if (readings.length > SMOOTHING_READINGS) readings.shift();
  if (readings.length < MIN_READINGS) return;
  const smoothed = median(readings);
  if (state.ref === null) {
    state.ref = smoothed;
    return;
  }
  const comparing = state.still !== null || state.tail > 0 || state.change !== null;
  if (comparing) compare(state, rules, tankLitres, smoothed, out);
  if (moving) {
    if (state.tail > 0) state.tail--;
    if (state.tail === 0 && state.change !== null) settle(state, tankLitres, out);
    // Driving: the reference follows the level down (consumption is no event).
    if (state.tail === 0 && state.change === null) state.ref = smoothed;
  }
}

function compare(state: FuelState, rules: FuelRules, tankLitres: number | null, smoothed: number, out: FuelChange[]): void {
  const change = state.change;
  if (change !== null) {
    const sign = change.kind === 'refill' ? 1 : -1;
    if ((smoothed - change.extreme) * sign > 0) change.extreme = smoothed;
    // Quiet: no further than the band beyond where the quiet run began (a slow siphon creeps on).
    if ((smoothed - change.quietFrom) * sign > SETTLE_BAND_PERCENT) {
      change.quiet = 0;
      change.quietFrom = smoothed;
    } else {
      change.quiet++;
    }
    if (change.quiet >= SETTLE_READINGS) settle(state, tankLitres, out);
    return;
  }
  const ref = state.ref!;
  const kind = smoothed - ref > rules.refillMinPercent ? 'refill' : ref - smoothed > rules.dropMinPercent ? 'drop' : null;
  if (kind === null) return;
  // Compared only parked or just after a stop, so parkedAt is that stop's last fix.
  state.change = { kind, at: state.parkedAt!, extreme: smoothed, quiet: 0, quietFrom: smoothed };
}

/** Logs the change in progress, from the reference to its furthest level, and measures from there on. */
function settle(state: FuelState, tankLitres: number | null, out: FuelChange[]): void {
  const change = state.change!;
  const from = state.ref!;
  const amount = Math.abs(change.extreme - from);
  out.push({
    kind: change.kind, at: change.at, fromPercent: round1(from), toPercent: round1(change.extreme), amountPercent: round1(amount),
    amountLitres: tankLitres !== null && tankLitres > 0 ? round1((amount * tankLitres) / 100) : null,
  });
  state.ref = change.extreme;
  state.change = null;
}

/** After a silence the vehicle may have driven through: a change seen before it is logged, the readings start afresh. */
function restart(state: FuelState, tankLitres: number | null, out: FuelChange[]): void {
  if (state.change !== null) settle(state, tankLitres, out);
  state.readings = [];
  state.ref = null;
  state.tail = 0;
  state.still = null;
  state.parkedAt = null;
}

/** A copy the step may change: the stored state (a replay's input) stays as it was. Its places are never changed, only replaced. */
const copyState = (s: FuelState): FuelState => ({
  readings: [...s.readings], last: s.last, still: s.still === null ? null : { ...s.still }, ref: s.ref, tail: s.tail, parkedAt: s.parkedAt,
  change: s.change === null ? null : { ...s.change },
});

const sorted = new Float64Array(SMOOTHING_READINGS);

/** The median of at most SMOOTHING_READINGS values, sorted by insertion in a scratch array (no allocation per reading). */
function median(values: readonly number[]): number {
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    let j = i - 1;
    while (j >= 0 && sorted[j]! > v) {
      sorted[j + 1] = sorted[j]!;
      j--;
    }
    sorted[j + 1] = v;
  }
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

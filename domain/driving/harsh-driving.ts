import type { EngineFix } from '../engine-step/engine-state.ts';
import type { HarshManoeuvre } from '../events/event-payloads.ts';

/**
 * Harsh acceleration, braking and cornering from a vehicle's fixes in fix-time order (docs/engine.md,
 * "Driving behaviour"): a pure function of (state, fixes), like the trip segmenter, so a replay decides
 * the same and the state is committed with the engine's cursor.
 *
 * Between two consecutive usable fixes (valid, with a speed, 1 s to `maxGapS` apart):
 * - longitudinal acceleration a = Δv / Δt from the trackers' speeds (GPS Doppler speed, far steadier
 *   than distance over time): a ≥ `accelerationMs2` is harsh acceleration, −a ≥ `brakingMs2` harsh braking;
 * - lateral acceleration v · ω, v the mean of the two speeds and ω the heading change (the shorter way
 *   round) per second, when both fixes are at least `corneringMinSpeedKmh` fast and report a heading:
 *   ≥ `corneringMs2` is harsh cornering.
 * Either figure above `MAX_PLAUSIBLE_MS2` is a glitch (a speed or heading spike), not driving: ignored.
 * A harsh acceleration or braking waits for the next usable fix: when the speed goes straight back
 * (the next interval is harsh the other way: 30 → 15 → 30 km/h in two seconds) it was one bad speed,
 * and neither counts; otherwise it is decided, with its own time and place. A tracker alarm of the same
 * kind, or a gap past `maxGapS`, decides it at once.
 *
 * A tracker's own harsh alarm (HARSH_ALARM_KINDS) counts as well, whatever its fix's validity. One
 * manoeuvre is one event: a computed or tracker event of a kind that starts within `sameEventS` of the
 * end of the previous one of that kind (from either source) continues it and logs nothing, so a
 * braking seen over three 1 s intervals, or seen both by the tracker and in the speeds, counts once.
 * At the same fix the tracker's alarm comes first.
 */

export type HarshKind = HarshManoeuvre['kind'];

/** Trackers' alarm names (ingest/protocols decoders) that are a harsh manoeuvre, by kind. */
export const HARSH_ALARM_KINDS: Readonly<Record<string, HarshKind>> = {
  hardAcceleration: 'acceleration',
  acceleration: 'acceleration',
  hardBraking: 'braking',
  braking: 'braking',
  hardCornering: 'cornering',
  cornering: 'cornering',
};

export const harshKindOfAlarm = (alarm: string | null): HarshKind | undefined =>
  alarm === null ? undefined : Object.hasOwn(HARSH_ALARM_KINDS, alarm) ? HARSH_ALARM_KINDS[alarm] : undefined;

/** Above 1.2 g no road vehicle accelerates, brakes or corners: a figure beyond is a bad speed or heading. */
export const MAX_PLAUSIBLE_MS2 = 12;
/** Fixes closer than this (sub-second trackers) turn a speed's noise into a large Δv/Δt: the later one is skipped. */
export const MIN_INTERVAL_S = 1;

export interface HarshSettings {
  /** HARSH_ACCELERATION_MS2. */
  accelerationMs2: number;
  /** HARSH_BRAKING_MS2 (a deceleration, positive). */
  brakingMs2: number;
  /** HARSH_CORNERING_MS2. */
  corneringMs2: number;
  /** HARSH_CORNERING_MIN_SPEED_KMH: below it a GPS heading is mostly noise. */
  corneringMinSpeedKmh: number;
  /** HARSH_MAX_GAP_S: fixes further apart are not compared. */
  maxGapS: number;
  /** HARSH_SAME_EVENT_S: events of a kind this close are one manoeuvre. */
  sameEventS: number;
}

export const DEFAULT_HARSH_SETTINGS: HarshSettings = {
  accelerationMs2: 2.5,
  brakingMs2: 3,
  corneringMs2: 3,
  corneringMinSpeedKmh: 20,
  maxGapS: 10,
  sameEventS: 5,
};

/** Where and when a harsh event happened: its fix. */
export interface HarshPoint {
  t: number;
  lat: number;
  lng: number;
  speedKmh: number | null;
  heading: number | null;
}

/** A computed acceleration or braking waiting for the next usable fix (see detectHarshDriving). */
type PendingHarsh = Omit<HarshEvent, 'fix'>;

/** What the detector remembers between evaluations: plain JSON, stored with the engine cursor. */
export interface HarshState {
  /** The previous usable fix: time (ms), speed, heading. */
  prev: { t: number; speedKmh: number; heading: number | null } | null;
  /** Per kind, when its last manoeuvre (counted or continued) ended, ms. */
  lastEnd: Record<HarshKind, number | null>;
  /** An acceleration or braking not yet decided; absent in states stored before it was kept. */
  pending?: PendingHarsh | null;
  /**
   * The kind of the interval that ended at `prev`, if harsh acceleration or braking, and the end of
   * that kind's last manoeuvre before it: a spike undoes it.
   */
  lastInterval?: { kind: HarshKind; lastEndBefore: number | null } | null;
}

export const EMPTY_HARSH_STATE: HarshState = { prev: null, lastEnd: { acceleration: null, braking: null, cornering: null }, pending: null, lastInterval: null };

export function harshState(stored: unknown): HarshState {
  const s = stored as Partial<HarshState> | null | undefined;
  if (!s || typeof s !== 'object' || !s.lastEnd) return { ...EMPTY_HARSH_STATE, lastEnd: { ...EMPTY_HARSH_STATE.lastEnd } };
  return { prev: s.prev ?? null, lastEnd: { ...EMPTY_HARSH_STATE.lastEnd, ...s.lastEnd }, pending: s.pending ?? null, lastInterval: s.lastInterval ?? null };
}

/** A fix as the harsh rules read it: the engine's fix. */
export type HarshFix = Pick<EngineFix, 'fixTime' | 'valid' | 'latitude' | 'longitude' | 'speedKmh' | 'heading' | 'alarm'>;

/** A harsh manoeuvre as decided here: what its event shows (HarshManoeuvre), and where it happened. */
export interface HarshEvent extends HarshManoeuvre {
  /** Index of the fix it happened at, or (decided in a later batch than it happened) 0: where it counts for the trip. */
  fix: number;
  /** The fix it happened at. */
  at: HarshPoint;
}

const KMH_TO_MS = 1 / 3.6;
/** A figure at a threshold counts: 10.8 km/h lost in 1 s is 3 m/s², whatever the last bit of a double says. */
const EPSILON = 1e-9;
const DEG_TO_RAD = Math.PI / 180;

/**
 * Appends the harsh events of `fixes` (in fix-time order) to `out` and returns the new state. Allocates
 * nothing per fix, only per event.
 */
export function detectHarshDriving(prior: HarshState, settings: HarshSettings, fixes: readonly HarshFix[], out: HarshEvent[]): HarshState {
  // The previous usable fix, in locals: nothing allocated per fix.
  let prevT = prior.prev?.t ?? Number.NaN;
  let prevSpeed = prior.prev?.speedKmh ?? 0;
  let prevHeading = prior.prev?.heading ?? null;
  const lastEnd = { ...prior.lastEnd };
  let pending = prior.pending ?? null;
  let lastInterval = prior.lastInterval ?? null;
  /** Index of the pending event's fix in this batch; −1: an earlier batch's. */
  let pendingFix = -1;
  const sameMs = settings.sameEventS * 1000;
  const maxGapMs = settings.maxGapS * 1000;

  /** Whether a manoeuvre of `kind` over [start, end] is a new one; either way it extends the last one's end. */
  const isNew = (kind: HarshKind, start: number, end: number): boolean => {
    const last = lastEnd[kind];
    lastEnd[kind] = last === null ? end : Math.max(last, end);
    return last === null || start - last > sameMs;
  };

  const decidePending = () => {
    out.push({ ...pending!, fix: pendingFix >= 0 ? pendingFix : 0 });
    pending = null;
  };
  const point = (f: HarshFix, t: number): HarshPoint => ({ t, lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading });

  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i]!;
    const t = f.fixTime.getTime();
    const alarmKind = harshKindOfAlarm(f.alarm);
    // The tracker felt what the speeds show: no spike.
    if (pending !== null && alarmKind === pending.kind) decidePending();
    if (alarmKind !== undefined && isNew(alarmKind, t, t)) {
      out.push({
        kind: alarmKind, fix: i, at: point(f, t), source: 'tracker', alarm: f.alarm, accelerationMs2: null,
        speedBeforeKmh: null, speedAfterKmh: null, headingChangeDeg: null, intervalS: null,
      });
    }
    if (!f.valid || f.speedKmh === null) continue;
    const speed = f.speedKmh;
    // NaN (no previous fix) fails both comparisons.
    if (t - prevT < MIN_INTERVAL_S * 1000) continue;
    if (!(t - prevT <= maxGapMs)) {
      if (pending !== null) decidePending();
      lastInterval = null;
    } else {
      const dt = (t - prevT) / 1000;
      const a = ((speed - prevSpeed) * KMH_TO_MS) / dt;
      const kind: HarshKind | null = Math.abs(a) > MAX_PLAUSIBLE_MS2 ? null
        : a >= settings.accelerationMs2 - EPSILON ? 'acceleration' : -a >= settings.brakingMs2 - EPSILON ? 'braking' : null;
      if (lastInterval !== null && kind !== null && kind !== lastInterval.kind) {
        // Straight back: one bad speed. Neither interval counts, and the manoeuvre never was.
        lastEnd[lastInterval.kind] = lastInterval.lastEndBefore;
        pending = null;
        lastInterval = null;
      } else {
        if (pending !== null) decidePending();
        lastInterval = kind === null ? null : { kind, lastEndBefore: lastEnd[kind] };
        if (kind !== null && isNew(kind, prevT, t)) {
          pending = {
            kind, at: point(f, t), source: 'computed', alarm: null, accelerationMs2: Math.abs(a),
            speedBeforeKmh: prevSpeed, speedAfterKmh: speed, headingChangeDeg: null, intervalS: dt,
          };
          pendingFix = i;
        }
      }
      const minSpeed = settings.corneringMinSpeedKmh;
      if (f.heading !== null && prevHeading !== null && speed >= minSpeed && prevSpeed >= minSpeed) {
        // The shorter way round: 350° → 10° is +20°, not −340°.
        const turn = ((((f.heading - prevHeading) % 360) + 540) % 360) - 180;
        const lateral = (((speed + prevSpeed) / 2) * KMH_TO_MS * Math.abs(turn) * DEG_TO_RAD) / dt;
        if (lateral >= settings.corneringMs2 - EPSILON && lateral <= MAX_PLAUSIBLE_MS2 && isNew('cornering', prevT, t)) {
          out.push({
            kind: 'cornering', fix: i, at: point(f, t), source: 'computed', alarm: null, accelerationMs2: lateral,
            speedBeforeKmh: prevSpeed, speedAfterKmh: speed, headingChangeDeg: turn, intervalS: dt,
          });
        }
      }
    }
    prevT = t;
    prevSpeed = speed;
    prevHeading = f.heading;
  }
  return { prev: Number.isNaN(prevT) ? null : { t: prevT, speedKmh: prevSpeed, heading: prevHeading }, lastEnd, pending, lastInterval };
}

import type { EngineFix } from '../engine-step/engine-state.ts';

/**
 * Idling: the ignition on and the vehicle not moving for at least `minS` (docs/engine.md, "Driving
 * behaviour"). A pure function of (state, fixes) in fix-time order, committed with the engine's cursor.
 *
 * "Moving" is the trip segmenter's (domain/trips/trip-segmenter.ts): a valid fix at `movingSpeedKmh`
 * (MOVING_SPEED_KMH) or faster. The ignition is the last one reported (a fix that reports none keeps it);
 * a tracker that never reports it never idles.
 * - Idling begins at the first valid, still fix with the ignition on.
 * - It ends at the first fix that reports the ignition off, or the first valid moving fix; or, when no
 *   fix comes for `maxGapS` (TRIP_MAX_GAP_S), at the last fix before the silence.
 * - Once it has lasted `minS` (IDLE_MIN_S), `start` is decided, with the time and place it began; the
 *   `end` that follows carries its length. An idling shorter than `minS` decides nothing.
 * Invalid fixes (no GPS lock) change the ignition and count as time, but neither begin nor end idling
 * by their speed.
 */

export interface IdleSettings {
  /** IDLE_MIN_S. */
  minS: number;
  /** MOVING_SPEED_KMH. */
  movingSpeedKmh: number;
  /** TRIP_MAX_GAP_S. */
  maxGapS: number;
}

export const DEFAULT_IDLE_MIN_S = 300;

/** A fix as idling reads it: the engine's fix. */
export type IdleFix = Pick<EngineFix, 'fixTime' | 'valid' | 'latitude' | 'longitude' | 'speedKmh' | 'heading' | 'ignition'>;

/** Where and when a fix was, as the state keeps it (for events decided in a later batch). */
export interface IdlePoint {
  t: number;
  lat: number;
  lng: number;
  speedKmh: number | null;
  heading: number | null;
}

/** Idling's memory between evaluations: plain JSON, stored with the engine cursor. */
export interface IdleState {
  /** The last ignition reported. */
  ignition: boolean | null;
  /** Where idling began; null: not idling. */
  since: IdlePoint | null;
  /** Its `start` was decided (it lasted `minS`). */
  started: boolean;
  /** The last fix seen (for the end of an idling cut by silence). */
  last: IdlePoint | null;
}

export const EMPTY_IDLE_STATE: IdleState = { ignition: null, since: null, started: false, last: null };

export function idleState(stored: unknown): IdleState {
  const s = stored as Partial<IdleState> | null | undefined;
  if (!s || typeof s !== 'object') return EMPTY_IDLE_STATE;
  return { ignition: s.ignition ?? null, since: s.since ?? null, started: s.started === true, last: s.last ?? null };
}

export type IdleDecision =
  | { kind: 'start'; since: IdlePoint }
  | { kind: 'end'; since: IdlePoint; at: IdlePoint; idleSeconds: number };

const pointOf = (f: IdleFix): IdlePoint => ({ t: f.fixTime.getTime(), lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading });

/** Appends the idling starts and ends of `fixes` (in fix-time order) to `out`; returns the new state. */
export function detectIdling(prior: IdleState, settings: IdleSettings, fixes: readonly IdleFix[], out: IdleDecision[]): IdleState {
  let { ignition, since, started, last } = prior;
  const minMs = settings.minS * 1000;
  const maxGapMs = settings.maxGapS * 1000;

  const end = (at: IdlePoint) => {
    if (since === null) return;
    const idleMs = at.t - since.t;
    if (!started && idleMs >= minMs) out.push({ kind: 'start', since });
    if (started || idleMs >= minMs) out.push({ kind: 'end', since, at, idleSeconds: Math.round(idleMs / 1000) });
    since = null;
    started = false;
  };

  // The batch's previous fix: its point is made only when needed (nothing allocated per fix).
  let lastFix: IdleFix | null = null;
  for (const f of fixes) {
    const t = f.fixTime.getTime();
    const lastT = lastFix !== null ? lastFix.fixTime.getTime() : last !== null ? last.t : null;
    if (since !== null && lastT !== null && t - lastT > maxGapMs) end(lastFix !== null ? pointOf(lastFix) : last!);
    if (f.ignition !== null) ignition = f.ignition;
    const moving = f.valid && (f.speedKmh ?? 0) >= settings.movingSpeedKmh;
    if (ignition !== true || moving) {
      if (since !== null) end(pointOf(f));
    } else if (since === null) {
      if (f.valid) since = pointOf(f);
    } else if (!started && t - since.t >= minMs) {
      started = true;
      out.push({ kind: 'start', since });
    }
    lastFix = f;
  }
  if (lastFix !== null) last = pointOf(lastFix);
  return { ignition, since, started, last };
}

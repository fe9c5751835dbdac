/** What the engine remembers of a device's signals between evaluations. */
export interface SignalState {
  /** The last ignition a fix reported; null before the first that reported one. */
  ignition: boolean | null;
  /** In a speeding stretch (see detectVehicleSignals). */
  overspeed: boolean;
}

export interface SignalRules {
  /** The device's speed limit (its own, else its account's); null: no overspeed detection. */
  speedLimitKmh: number | null;
  /** A speeding stretch ends only below the limit minus this much. */
  hysteresisKmh: number;
}

export interface SignalFix {
  valid: boolean;
  speedKmh: number | null;
  ignition: boolean | null;
  alarm: string | null;
}

export type VehicleSignalKind = 'ignition.on' | 'ignition.off' | 'overspeed' | 'alarm';

export interface VehicleSignal {
  kind: VehicleSignalKind;
  /** Index of the fix that showed it, in the fixes given. */
  fix: number;
}

/**
 * A device's ignition transitions, speeding stretches and alarms over its new fixes in fix-time
 * order: a pure function of (state, fixes), like the geofence evaluation, so a replay decides the same.
 *
 * - Ignition: a fix reporting ignition on after one reporting it off is `ignition.on`, and the reverse
 *   `ignition.off`. The first ignition ever reported is `ignition.on` if on (the vehicle was started
 *   while we did not know it) and nothing if off (a parked vehicle is the resting case). Fixes that do
 *   not report ignition change nothing.
 * - Overspeed: a valid fix faster than the limit starts a stretch (one `overspeed`); the stretch ends
 *   at the first valid fix slower than limit − hysteresis, so a speed hovering around the limit is one
 *   event. Invalid fixes (no GPS lock) and fixes without speed are ignored; without a limit there is
 *   no stretch.
 * - Alarm: every fix carrying an alarm, whatever its validity.
 *
 * Signals are appended to `out` (no array per device) and the new state returned.
 */
export function detectVehicleSignals(state: SignalState, rules: SignalRules, fixes: readonly SignalFix[], out: VehicleSignal[]): SignalState {
  let ignition = state.ignition;
  const limit = rules.speedLimitKmh;
  let overspeed = limit === null ? false : state.overspeed;
  const below = limit === null ? 0 : limit - rules.hysteresisKmh;
  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i]!;
    if (f.ignition !== null && f.ignition !== ignition) {
      if (f.ignition) out.push({ kind: 'ignition.on', fix: i });
      else if (ignition !== null) out.push({ kind: 'ignition.off', fix: i });
      ignition = f.ignition;
    }
    if (limit !== null && f.valid && f.speedKmh !== null) {
      if (!overspeed && f.speedKmh > limit) {
        overspeed = true;
        out.push({ kind: 'overspeed', fix: i });
      } else if (overspeed && f.speedKmh < below) {
        overspeed = false;
      }
    }
    if (f.alarm !== null) out.push({ kind: 'alarm', fix: i });
  }
  return { ignition, overspeed };
}

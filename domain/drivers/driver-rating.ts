/**
 * A driver's rating, 0 to 100, from what their trips of the last 30 days add up to (the engine's trip
 * segmenter writes the per-trip figures; nothing is replayed here). Per 100 km driven:
 *
 *   rating = 100 − 2 × overspeed minutes − 5 × harsh events − 0.5 × idle minutes
 *
 * rounded and clamped to 0..100. Under 10 km in the window there is too little driving to judge, and
 * the rating is null. Harsh events are the trips' harsh accelerations, brakings and cornerings, worked
 * out from the fixes and the trackers' own alarms, each manoeuvre once (domain/driving/harsh-driving.ts);
 * idle is ignition on while not moving during trips. docs/api/drivers.md, "Rating", shows worked examples.
 */

export const RATING_WINDOW_DAYS = 30;
export const RATING_MIN_DISTANCE_KM = 10;
/** Points off per unit per 100 km. */
export const RATING_WEIGHTS = { overspeedMinute: 2, harshEvent: 5, idleMinute: 0.5 } as const;

export interface DrivingTotals {
  distanceM: number;
  overspeedS: number;
  harshEvents: number;
  idleS: number;
}

export function driverRating(t: DrivingTotals): number | null {
  const km = t.distanceM / 1000;
  if (!(km >= RATING_MIN_DISTANCE_KM)) return null;
  const per100 = 100 / km;
  const penalty =
    RATING_WEIGHTS.overspeedMinute * (t.overspeedS / 60) * per100 +
    RATING_WEIGHTS.harshEvent * t.harshEvents * per100 +
    RATING_WEIGHTS.idleMinute * (t.idleS / 60) * per100;
  return Math.min(100, Math.max(0, Math.round(100 - penalty)));
}

import { haversineMetres } from '../geofences/fence-shape.ts';

export interface EtaSettings {
  /** Roads are longer than the great circle: distances are multiplied by this (default 1.3). */
  roadFactor: number;
  /** Used when the vehicle has no recent moving speed (default 40 km/h). */
  defaultSpeedKmh: number;
}

export interface Stop {
  seq: number;
  latitude: number;
  longitude: number;
}

/**
 * Estimated arrival at each pending waypoint, in order: the remaining distance along the chain
 * current position → next waypoint's geofence center → the one after…, great-circle times the road
 * factor, at the vehicle's recent moving speed (or the default when it has none), from `now`.
 */
export function estimateArrivals(
  from: { latitude: number; longitude: number },
  now: number,
  stops: readonly Stop[],
  recentSpeedKmh: number | null,
  settings: EtaSettings,
): Array<{ seq: number; estimatedArrival: number }> {
  const speedKmh = recentSpeedKmh !== null && recentSpeedKmh > 0 ? recentSpeedKmh : settings.defaultSpeedKmh;
  const metresPerMs = (speedKmh * 1000) / 3_600_000;
  let metres = 0;
  let here = from;
  return stops.map((stop) => {
    metres += haversineMetres(here.latitude, here.longitude, stop.latitude, stop.longitude) * settings.roadFactor;
    here = stop;
    return { seq: stop.seq, estimatedArrival: Math.round(now + metres / metresPerMs) };
  });
}

import { metresToKm, roundSpeedKmh, roundTo } from '../display-precision.ts';

/** One vehicle's trip and stop totals over a range, as the trip report reads them. */
export interface TripTotals {
  trip_count: number;
  distance_m: number;
  driving_s: number;
  trip_idle_s: number;
  stop_idle_s: number;
  overspeed_s: number;
  max_speed_kmh: number | null;
}

/** The trips report's KPIs, as the API rounds them. */
export interface TripKpis {
  tripCount: number;
  distanceKm: number;
  drivingS: number;
  idleS: number;
  overspeedS: number;
  maxSpeedKmh: number | null;
  utilisation: number;
}

/**
 * One vehicle's KPIs, or with several, the fleet's: idle is idling on trips and at stops, utilisation
 * is driving time over the range times the vehicles. The trips report and the scheduled report
 * emails both show these, so they say the same.
 */
export function tripKpis(totals: readonly TripTotals[], rangeS: number): TripKpis {
  let trips = 0, distance = 0, driving = 0, idle = 0, overspeed = 0;
  let max: number | null = null;
  for (const t of totals) {
    trips += t.trip_count;
    distance += t.distance_m;
    driving += t.driving_s;
    idle += t.trip_idle_s + t.stop_idle_s;
    overspeed += t.overspeed_s;
    if (t.max_speed_kmh !== null) max = Math.max(max ?? 0, t.max_speed_kmh);
  }
  const capacity = rangeS * totals.length;
  return {
    tripCount: trips,
    distanceKm: metresToKm(distance),
    drivingS: Math.round(driving),
    idleS: Math.round(idle),
    overspeedS: Math.round(overspeed),
    maxSpeedKmh: roundSpeedKmh(max),
    utilisation: capacity > 0 ? roundTo(Math.min(1, driving / capacity), 4) : 0,
  };
}

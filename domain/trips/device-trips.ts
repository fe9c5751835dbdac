import type { EngineFix } from '../engine-step/engine-state.ts';
import type { GeofenceIndex } from '../geofences/geofence-index.ts';
import { EMPTY_SEGMENT_STATE, segmentTrips, type SegmentState, type StopRecord, type TripRecord, type TripRules } from './trip-segmenter.ts';

export interface DeviceTrip extends TripRecord {
  deviceId: number;
}

export interface DeviceStop extends StopRecord {
  deviceId: number;
}

/** The trip settings of the engine (README, "Trips and stops"); the speed limit is each vehicle's own. */
export type TripSettings = Omit<TripRules, 'speedLimitKmh'>;

export const DEFAULT_TRIP_SETTINGS: TripSettings = {
  movingSpeedKmh: 5,
  useIgnition: false,
  minStopS: 300,
  minDistanceM: 200,
  minDurationS: 180,
  maxGapS: 3600,
};

/**
 * The geofence a trip or stop point is in: the smallest (by bounding box) of those covering it, so a
 * depot inside a city zone is named as the depot. Null outside all of them.
 */
export function smallestGeofenceAt(index: GeofenceIndex | undefined, scratch: { ids: Int32Array }): (lat: number, lng: number) => number | null {
  return (lat, lng) => {
    if (!index) return null;
    let n = index.query(lat, lng, scratch.ids);
    if (n > scratch.ids.length) {
      scratch.ids = new Int32Array(n * 2);
      n = index.query(lat, lng, scratch.ids);
    }
    let best: number | null = null;
    let bestArea = Infinity;
    for (let i = 0; i < n; i++) {
      const id = scratch.ids[i]!;
      const box = index.box(id);
      const area = box ? (box[2] - box[0]) * (box[3] - box[1]) : Infinity;
      if (best === null || area < bestArea) {
        best = id;
        bestArea = area;
      }
    }
    return best;
  };
}

const scratch = { ids: new Int32Array(16) };

/** One device's new fixes through the segmenter: the rows to write and the state to commit. */
export function deviceTrips(
  deviceId: number,
  stored: Record<string, unknown> | null,
  fixes: readonly EngineFix[],
  rules: TripRules,
  index: GeofenceIndex | undefined,
  driverByFix: readonly (number | null)[] | undefined,
  /** The server's odometer (m) after each fix, when it keeps one (domain/accumulators/). */
  odometerAt?: Float64Array,
  /** Harsh events counted at each fix (domain/driving/driving-behaviour.ts); absent: the trackers' harsh alarms. */
  harshAt?: Uint8Array,
): { state: SegmentState; trips: DeviceTrip[]; stops: DeviceStop[] } {
  const prior = stored ? (stored as unknown as SegmentState) : EMPTY_SEGMENT_STATE;
  const out = segmentTrips(
    prior,
    rules,
    fixes.map((f, i) => ({
      t: f.fixTime.getTime(), valid: f.valid, lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, ignition: f.ignition, odometerKm: f.odometerKm, alarm: f.alarm,
      serverOdometerM: odometerAt?.[i] ?? null, ...(harshAt ? { harshEvents: harshAt[i]! } : {}),
    })),
    (i) => driverByFix?.[i] ?? null,
    smallestGeofenceAt(index, scratch),
  );
  return {
    state: out.state,
    trips: out.trips.map((t) => ({ ...t, deviceId })),
    stops: out.stops.map((s) => ({ ...s, deviceId })),
  };
}

import type { AccumulatorFix } from '../accumulators/vehicle-accumulators.ts';
import { harshKindOfAlarm } from '../driving/harsh-driving.ts';
import { haversineMetres } from '../geofences/fence-shape.ts';

/** The rules that cut a vehicle's timeline into trips and stops (README, "Trips and stops"). */
export interface TripRules {
  /** A fix at this speed or faster is moving (`MOVING_SPEED_KMH`). */
  movingSpeedKmh: number;
  /** Moving means ignition on instead of speed (`TRIPS_USE_IGNITION`). */
  useIgnition: boolean;
  /** A trip ends once the vehicle has not moved for this long (`TRIP_MIN_STOP_S`). */
  minStopS: number;
  /** Shorter trips are merged into the surrounding stop (`TRIP_MIN_DISTANCE_M`, `TRIP_MIN_DURATION_S`). */
  minDistanceM: number;
  minDurationS: number;
  /** Silence longer than this ends a trip at its last fix (`TRIP_MAX_GAP_S`). */
  maxGapS: number;
  /** Time above it counts as overspeed; null: none counts. */
  speedLimitKmh: number | null;
}

/** A fix as the segmenter reads it: what the accumulators read, and the tracker's odometer and alarm. */
export interface SegmentFix extends AccumulatorFix {
  odometerKm: number | null;
  alarm: string | null;
  /** The server's odometer after this fix, in m (domain/accumulators/); null or absent: none. */
  serverOdometerM?: number | null;
  /**
   * Harsh events counted at this fix, computed and the tracker's, each manoeuvre once
   * (domain/driving/harsh-driving.ts); absent: the tracker's harsh alarm alone counts.
   */
  harshEvents?: number;
}

/** Where a fix was, as the segmenter remembers it. */
interface Point {
  t: number;
  lat: number;
  lng: number;
  odometerKm: number | null;
  /** The server's odometer there, m; absent in states stored before it was kept. */
  serverOdometerM?: number | null;
  /** The geofence the vehicle was in there, by id (resolved once, when the point starts or ends something). */
  geofenceId: number | null;
}

/** Totals over a stretch of a trip. */
interface Totals {
  legsM: number;
  drivingS: number;
  idleS: number;
  overspeedS: number;
  maxSpeedKmh: number;
  harshEvents: number;
}

interface OpenTrip extends Totals {
  start: Point;
  /** The last fix of the part known to be the trip: up to the last moving fix, or the first still one after it. */
  end: Point;
  driverId: number | null;
  /** Written as a row: it met the minimum distance and duration, which only grow. */
  recorded: boolean;
  /** Since the vehicle stopped moving: becomes the trip's if it moves again, the next stop's if it does not. */
  still: (Totals & { since: Point }) | null;
}

interface OpenStop {
  start: Point;
  engineIdleS: number;
}

/** The segmenter's memory between evaluations: plain JSON, stored with the engine cursor. */
export interface SegmentState {
  /** The previous valid fix: the start of the next interval. */
  last: { t: number; lat: number; lng: number; speedKmh: number | null; odometerKm: number | null; serverOdometerM?: number | null } | null;
  /** The last ignition reported (fixes that do not report it keep it). */
  ignition: boolean | null;
  trip: OpenTrip | null;
  stop: OpenStop | null;
}

export const EMPTY_SEGMENT_STATE: SegmentState = { last: null, ignition: null, trip: null, stop: null };

/** A trip as it is to be stored: `endTime` null while in progress. */
export interface TripRecord {
  startTime: number;
  endTime: number | null;
  lastFixTime: number;
  startLat: number;
  startLng: number;
  endLat: number;
  endLng: number;
  startGeofenceId: number | null;
  endGeofenceId: number | null;
  distanceM: number;
  drivingS: number;
  idleS: number;
  overspeedS: number;
  maxSpeedKmh: number;
  harshEvents: number;
  driverId: number | null;
}

export interface StopRecord {
  startTime: number;
  endTime: number | null;
  lastFixTime: number;
  lat: number;
  lng: number;
  geofenceId: number | null;
  engineIdleS: number;
}

export interface SegmentOutput {
  state: SegmentState;
  /** Every trip and stop this run touched, final or in progress; written by (device, start time). */
  trips: TripRecord[];
  stops: StopRecord[];
}

const zeroTotals = (): Totals => ({ legsM: 0, drivingS: 0, idleS: 0, overspeedS: 0, maxSpeedKmh: 0, harshEvents: 0 });

function addTotals(into: Totals, from: Totals): void {
  into.legsM += from.legsM;
  into.drivingS += from.drivingS;
  into.idleS += from.idleS;
  into.overspeedS += from.overspeedS;
  into.maxSpeedKmh = Math.max(into.maxSpeedKmh, from.maxSpeedKmh);
  into.harshEvents += from.harshEvents;
}

/**
 * The tracker's odometer count when both ends carry one and it went forward; else the server's
 * odometer count (the same as the vehicle's status shows, filtered against a halted vehicle's GPS
 * scatter) when both ends have one; else the legs. An odometer that did not move is not counting
 * (many trackers send 0 when theirs is off), one that went back was reset or replaced.
 */
function tripDistanceM(trip: OpenTrip): number {
  const a = trip.start.odometerKm;
  const b = trip.end.odometerKm;
  if (a !== null && b !== null && b > a) return (b - a) * 1000;
  const from = trip.start.serverOdometerM;
  const to = trip.end.serverOdometerM;
  return from != null && to != null && to >= from ? to - from : trip.legsM;
}

/**
 * Cuts a vehicle's fixes, in fix-time order, into trips and stops: a pure function of (state, fixes),
 * so a replay decides the same and the state can be committed with the engine's cursor.
 *
 * - Only valid fixes count (an invalid one has no trustworthy place or speed).
 * - A trip starts at the first moving fix, or at the fix before it when that one is at most
 *   `minStopS` earlier (the vehicle left from there: no distance is lost, no parking time gained).
 * - Each interval between consecutive fixes is driving if either fix was moving (by speed), else idle
 *   if the ignition was on; overspeed if its first fix was above the limit.
 * - A trip ends at its first still fix once the vehicle has stayed still for `minStopS`, or at its
 *   last fix when no fix came for `maxGapS`. What happened while still goes to the next stop.
 * - A trip is recorded once its known part is `minDistanceM` long and `minDurationS` long; one that
 *   ends shorter is merged into the stop around it (its idle time becomes the stop's).
 * - A stop runs from a trip's end (or the first fix) to the next recorded trip's start.
 *
 * `driverAt(i)` is the driver in effect at fix i; `geofenceAt` the geofence a point is in.
 */
export function segmentTrips(
  prior: SegmentState,
  rules: TripRules,
  fixes: readonly SegmentFix[],
  driverAt: (i: number) => number | null,
  geofenceAt: (lat: number, lng: number) => number | null,
): SegmentOutput {
  const state: SegmentState = structuredClone(prior);
  const trips = new Map<number, TripRecord>();
  const stops = new Map<number, StopRecord>();
  const limit = rules.speedLimitKmh;

  const point = (f: { t: number; lat: number; lng: number; odometerKm: number | null; serverOdometerM?: number | null }, withGeofence: boolean): Point => ({
    t: f.t, lat: f.lat, lng: f.lng, odometerKm: f.odometerKm, serverOdometerM: f.serverOdometerM ?? null, geofenceId: withGeofence ? geofenceAt(f.lat, f.lng) : null,
  });
  const qualifies = (trip: OpenTrip) =>
    (trip.end.t - trip.start.t) / 1000 >= rules.minDurationS && tripDistanceM(trip) >= rules.minDistanceM;
  const tripRecord = (trip: OpenTrip, ended: boolean): TripRecord => ({
    startTime: trip.start.t, endTime: ended ? trip.end.t : null, lastFixTime: trip.end.t,
    startLat: trip.start.lat, startLng: trip.start.lng, endLat: trip.end.lat, endLng: trip.end.lng,
    startGeofenceId: trip.start.geofenceId, endGeofenceId: geofenceAt(trip.end.lat, trip.end.lng),
    distanceM: tripDistanceM(trip), drivingS: trip.drivingS, idleS: trip.idleS, overspeedS: trip.overspeedS,
    maxSpeedKmh: trip.maxSpeedKmh, harshEvents: trip.harshEvents, driverId: trip.driverId,
  });
  const stopRecord = (stop: OpenStop, endTime: number | null, lastFixTime: number): StopRecord => ({
    startTime: stop.start.t, endTime, lastFixTime, lat: stop.start.lat, lng: stop.start.lng, geofenceId: stop.start.geofenceId, engineIdleS: stop.engineIdleS,
  });

  /** Ends the open trip at its known end: recorded, it starts a stop there; too short, it folds into the stop it interrupted. */
  const endTrip = (lastFixTime: number) => {
    const trip = state.trip!;
    const still = trip.still;
    state.trip = null;
    if (trip.recorded || qualifies(trip)) {
      if (!trip.recorded) closeStopBefore(trip);
      trips.set(trip.start.t, tripRecord(trip, true));
      const start = { ...trip.end, geofenceId: geofenceAt(trip.end.lat, trip.end.lng) };
      state.stop = { start, engineIdleS: still?.idleS ?? 0 };
    } else if (state.stop) {
      state.stop.engineIdleS += trip.idleS + (still?.idleS ?? 0);
    } else {
      // The vehicle's first fixes were a trip too short to keep: the stop starts where it did.
      state.stop = { start: trip.start, engineIdleS: trip.idleS + (still?.idleS ?? 0) };
    }
    if (state.stop) stops.set(state.stop.start.t, stopRecord(state.stop, null, lastFixTime));
  };

  /** The stop a trip interrupted ends where the trip starts, once the trip is known to be one. */
  const closeStopBefore = (trip: OpenTrip) => {
    if (!state.stop) return;
    stops.set(state.stop.start.t, stopRecord(state.stop, trip.start.t, trip.start.t));
    state.stop = null;
  };

  // Harsh events at invalid fixes (a tracker's alarm without a GPS lock) count with the next valid one.
  let harshCarried = 0;
  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i]!;
    const harshHere = f.harshEvents ?? (harshKindOfAlarm(f.alarm) !== undefined ? 1 : 0);
    if (!f.valid) {
      harshCarried += harshHere;
      continue;
    }
    // The interval since the previous fix had the ignition that fix left in effect.
    const ignitionBefore = state.ignition;
    if (f.ignition !== null) state.ignition = f.ignition;
    const moving = rules.useIgnition ? state.ignition === true : (f.speedKmh ?? 0) >= rules.movingSpeedKmh;
    const prev = state.last;
    const gap = prev !== null && (f.t - prev.t) / 1000 > rules.maxGapS;
    if (gap && state.trip) endTrip(prev!.t);

    const interval = zeroTotals();
    if (prev && !gap) {
      const dt = (f.t - prev.t) / 1000;
      interval.legsM = haversineMetres(prev.lat, prev.lng, f.lat, f.lng);
      // Moving at either end: it was driving (pulling away, or slowing to a halt), not idling.
      if ((prev.speedKmh ?? 0) >= rules.movingSpeedKmh || (f.speedKmh ?? 0) >= rules.movingSpeedKmh) interval.drivingS = dt;
      else if (ignitionBefore === true) interval.idleS = dt;
      if (limit !== null && (prev.speedKmh ?? 0) > limit) interval.overspeedS = dt;
    }
    interval.maxSpeedKmh = f.speedKmh ?? 0;
    interval.harshEvents = harshHere + harshCarried;
    harshCarried = 0;

    const trip = state.trip;
    if (trip) {
      if (trip.driverId === null) trip.driverId = driverAt(i);
      // A harsh event belongs to the trip it happened in, even at a fix that turns out to be the halt after it.
      trip.harshEvents += interval.harshEvents;
      interval.harshEvents = 0;
      if (trip.still) {
        addTotals(trip.still, interval);
        if (moving) {
          // It moved again within minStopS: the halt was part of the trip.
          addTotals(trip, trip.still);
          trip.still = null;
          trip.end = point(f, false);
        } else if ((f.t - trip.still.since.t) / 1000 >= rules.minStopS) {
          endTrip(f.t);
        }
      } else {
        addTotals(trip, interval);
        trip.end = point(f, false);
        if (!moving) trip.still = { ...zeroTotals(), since: trip.end };
      }
      const open = state.trip;
      if (open && !open.recorded && qualifies(open)) {
        closeStopBefore(open);
        open.recorded = true;
      }
    } else if (moving) {
      // Left from the previous fix when it is recent; otherwise the trip starts here (no parking time gained).
      const fromPrev = prev !== null && !gap && (f.t - prev.t) / 1000 <= rules.minStopS;
      const opened: OpenTrip = {
        ...(fromPrev ? interval : { ...zeroTotals(), maxSpeedKmh: interval.maxSpeedKmh, harshEvents: interval.harshEvents }),
        start: point(fromPrev ? prev! : f, true),
        end: point(f, false),
        driverId: driverAt(i),
        recorded: false,
        still: null,
      };
      state.trip = opened;
      if (qualifies(opened)) {
        closeStopBefore(opened);
        opened.recorded = true;
      }
    } else if (state.stop) {
      state.stop.engineIdleS += interval.idleS;
    } else {
      state.stop = { start: point(f, true), engineIdleS: 0 };
    }

    state.last = { t: f.t, lat: f.lat, lng: f.lng, speedKmh: f.speedKmh, odometerKm: f.odometerKm, serverOdometerM: f.serverOdometerM ?? null };
  }

  if (state.trip?.recorded) trips.set(state.trip.start.t, tripRecord(state.trip, false));
  if (state.stop && state.last) stops.set(state.stop.start.t, stopRecord(state.stop, null, state.last.t));
  return { state, trips: [...trips.values()], stops: [...stops.values()] };
}

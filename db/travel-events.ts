import type { EventPosition, NewEvent } from './event-log.ts';

/** `data.travel` as the API names its status. */
type TravelStatusName = 'In progress' | 'Completed' | 'Cancelled';

const minutesLate = (at: Date, expected: Date) => Math.round((at.getTime() - expected.getTime()) / 60_000);

/** The vehicle's last known position, when it has one (a travel may start before its vehicle ever reported). */
export function lastPosition(r: {
  latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null; fix_time: Date | null;
}): EventPosition | null {
  if (r.latitude === null || r.longitude === null || r.fix_time === null) return null;
  return { lat: r.latitude, lng: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, fixTime: r.fix_time };
}

function travelEvent(
  type: NewEvent['type'], what: string, travel: { id: number; deviceId: number }, status: TravelStatusName, at: Date,
  position: EventPosition | null, extra: Record<string, unknown> = {},
): NewEvent {
  return {
    type, occurredAt: at, deviceId: travel.deviceId, position,
    data: { travel: { id: travel.id, status }, ...extra },
    dedupeKey: `travel:${travel.id}:${what}`,
  };
}

/** Started at its start time, from where the vehicle last was. */
export const travelStartedEvent = (travel: { id: number; deviceId: number }, startTime: Date, position: EventPosition | null) =>
  travelEvent('travel.started', 'started', travel, 'In progress', startTime, position);

export interface ArrivedWaypoint {
  seq: number;
  geofenceName: string;
  expectedArrival: Date;
  arrivedAt: Date;
}

/** A waypoint reached; `status` is the travel's after it (Completed for the last one). */
export const waypointArrivedEvent = (travel: { id: number; deviceId: number }, w: ArrivedWaypoint, status: TravelStatusName, position: EventPosition | null) =>
  travelEvent('travel.waypoint.arrived', `waypoint:${w.seq}:arrived`, travel, status, w.arrivedAt, position, {
    waypoint: {
      order: w.seq, geofence: w.geofenceName, expectedArrival: w.expectedArrival.toISOString(), arrivedAt: w.arrivedAt.toISOString(),
      delayMinutes: minutesLate(w.arrivedAt, w.expectedArrival),
    },
  });

export const travelCompletedEvent = (travel: { id: number; deviceId: number }, at: Date, position: EventPosition | null) =>
  travelEvent('travel.completed', 'completed', travel, 'Completed', at, position);

export const travelCancelledEvent = (travel: { id: number; deviceId: number }, at: Date) =>
  travelEvent('travel.cancelled', 'cancelled', travel, 'Cancelled', at, null);

export interface DelayedWaypoint {
  seq: number;
  geofenceName: string;
  expectedArrival: Date;
  estimatedArrival: Date;
}

/** A pending waypoint's estimate went past its expected arrival by more than the tolerance (once per waypoint). */
export const travelDelayedEvent = (travel: { id: number; deviceId: number }, w: DelayedWaypoint, at: Date, position: EventPosition | null) =>
  travelEvent('travel.delayed', `waypoint:${w.seq}:delayed`, travel, 'In progress', at, position, {
    waypoint: {
      order: w.seq, geofence: w.geofenceName, expectedArrival: w.expectedArrival.toISOString(),
      estimatedArrival: w.estimatedArrival.toISOString(), delayMinutes: minutesLate(w.estimatedArrival, w.expectedArrival),
    },
  });

/**
 * Whether an estimate is late by the API's own rule (api/views/travel-view.ts waypointTiming): whole
 * minutes late, rounded, beyond the on-time tolerance.
 */
export const isLate = (estimate: Date, expected: Date, toleranceMinutes: number) => minutesLate(estimate, expected) > toleranceMinutes;

import type { EngineFix } from '../engine-step/engine-state.ts';
import {
  fixPosition, travelCompletedEvent, travelStartedEvent, waypointArrivedEvent, type EventPosition, type NewEvent,
} from '../events/event-payloads.ts';
import type { Crossing } from '../geofences/fence-crossings.ts';
import { arrivalsFromCrossings, type WaypointProgress } from './travel-progress.ts';

export interface StepWaypoint extends WaypointProgress {
  geofenceName: string;
  expectedArrival: Date;
  /** Waypoint 1, `Current position`: completed by the start itself, never by an arrival. */
  starting: boolean;
}

/** A vehicle's active travel as an engine step reads it (locked): In progress, or Scheduled with its start time come. */
export interface StepTravel {
  id: number;
  deviceId: number;
  /** Scheduled and due: the step starts it before its vehicle's fixes are evaluated. */
  due: boolean;
  startTime: Date;
  /** Null until started. */
  startedAt: Date | null;
  /** The vehicle's last known position: where a travel started now starts from. */
  lastPosition: EventPosition | null;
  waypoints: StepWaypoint[];
}

export interface TravelStart {
  travelId: number;
  /** Kept as the travel's starting point. */
  position: EventPosition | null;
}

export interface WaypointArrival {
  travelId: number;
  seq: number;
  arrivedAt: Date;
}

/**
 * The due travels' starts and `travel.started` events, in start-time order: each starts at its start
 * time from where its vehicle last was, and its starting waypoint is completed then.
 */
export function travelStarts(travels: readonly StepTravel[]): { starts: TravelStart[]; events: NewEvent[] } {
  const due = travels.filter((t) => t.due).sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || a.id - b.id);
  return {
    starts: due.map((t) => ({ travelId: t.id, position: t.lastPosition })),
    events: due.map((t) => travelStartedEvent(t, t.startTime, t.lastPosition)),
  };
}

/**
 * A travel's arrivals from its vehicle's crossings (travel-progress.ts: waypoints complete in order),
 * with their events: `travel.waypoint.arrived` per waypoint at the fix of its enter, then
 * `travel.completed` with the last. A dwell time may date an enter to a fix of an earlier batch: its
 * position is then the crossing's, without speed or heading.
 */
export function travelArrivals(
  travel: StepTravel,
  crossings: readonly Crossing[],
  fixes: readonly EngineFix[],
): { arrivals: WaypointArrival[]; completedAt: Date | null; events: NewEvent[] } {
  const startedAt = travel.startedAt ?? travel.startTime;
  const waypoints = travel.waypoints.filter((w) => !w.starting);
  const found = arrivalsFromCrossings(waypoints, startedAt.getTime(), crossings);
  if (found.arrivals.length === 0) return { arrivals: [], completedAt: null, events: [] };
  const positionAt = (at: number): EventPosition | null => {
    const f = fixes.find((x) => x.fixTime.getTime() === at);
    if (f) return fixPosition(f);
    const c = crossings.find((x) => x.fixTime === at && x.type === 'enter');
    return c ? { lat: c.latitude, lng: c.longitude, speedKmh: null, heading: null, fixTime: new Date(at) } : null;
  };
  const bySeq = new Map(waypoints.map((w) => [w.seq, w]));
  const arrivals = found.arrivals.map((a) => ({ travelId: travel.id, seq: a.seq, arrivedAt: new Date(a.arrivedAt) }));
  const completedAt = found.completed ? arrivals[arrivals.length - 1]!.arrivedAt : null;
  const events = arrivals.map((a, i) => {
    const w = bySeq.get(a.seq)!;
    return waypointArrivedEvent(
      travel,
      { seq: a.seq, geofenceName: w.geofenceName, expectedArrival: w.expectedArrival, arrivedAt: a.arrivedAt },
      completedAt && i === arrivals.length - 1 ? 'Completed' : 'In progress',
      positionAt(a.arrivedAt.getTime()),
    );
  });
  if (completedAt) events.push(travelCompletedEvent(travel, completedAt, positionAt(completedAt.getTime())));
  return { arrivals, completedAt, events };
}

import { roundCoordinate, roundHeading, roundSpeedKmh, roundTo } from '../display-precision.ts';
import type { DriverChange } from '../drivers/driver-assignment.ts';
import { MAINTENANCE_UNITS, thresholdKey, type MaintenanceKind } from '../maintenance/maintenance-schedule.ts';
import type { EventType } from './event-catalog.ts';

/**
 * Every event's `data` and name, built here and nowhere else: the engine's decisions, the travel and
 * command state machines, driver assignment, tracker presence and webhooks all hand this module what
 * happened and get back the row to log. db/ appends what it is given (adding `vehicle`, read in the
 * same statement); event-catalog.ts says what each kind means.
 */

/** Where the vehicle was when the event happened, as the payload carries it. */
export interface EventPosition {
  lat: number;
  lng: number;
  speedKmh: number | null;
  heading: number | null;
  fixTime: Date;
  /**
   * The vehicle's reverse-geocoded address when the event was logged, if known for a point near this
   * one (domain/geocoding/address-reuse.ts); the engine's events always say, null when unknown.
   */
  address?: string | null;
}

export interface NewEvent {
  type: EventType;
  /** When it happened: the fix time for what a fix showed, the server time otherwise. */
  occurredAt: Date;
  /** The vehicle it concerns: its account, mode and names are read in the same statement. */
  deviceId?: number;
  /** Required for an event without a vehicle. */
  accountId?: number;
  /** For an event without a vehicle: who may see it (null: every user of the account; both modes). */
  userId?: number | null;
  mode?: 'live' | 'test' | null;
  position?: EventPosition | null;
  /** The kind's own fields, merged into `data` after `vehicle` and `position`. */
  data?: Record<string, unknown>;
  /**
   * Names the decision that made the event (`geofence:<crossing id>`, `travel:<id>:started`): a
   * producer that runs twice (a retried job, a replayed batch) adds nothing the second time.
   */
  dedupeKey: string;
}

/** The payload a webhook receives and the stream sends: `{id, type, timestamp, data}`. */
export interface EventPayload {
  id: string;
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}

export function eventPayload(event: { id: string; type: EventType; occurredAt: Date; data: Record<string, unknown> }): EventPayload {
  return { id: event.id, type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data };
}

/** Rounded as the API answers numbers (domain/display-precision.ts): the fix itself keeps its precision in the position history. */
export function positionData(p: EventPosition): Record<string, unknown> {
  return {
    lat: roundCoordinate(p.lat), lng: roundCoordinate(p.lng), speedKmh: roundSpeedKmh(p.speedKmh), heading: roundHeading(p.heading),
    fixTime: p.fixTime.toISOString(), ...(p.address !== undefined ? { address: p.address } : {}),
  };
}

/** `data` as logged, less `vehicle` (the log's insert puts it first): the position, then the kind's fields. */
export function eventDataJson(e: NewEvent): string {
  return JSON.stringify({ ...(e.position ? { position: positionData(e.position) } : {}), ...e.data });
}

export const fixPosition = (f: { latitude: number; longitude: number; speedKmh: number | null; heading: number | null; fixTime: Date }): EventPosition => ({
  lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading, fixTime: f.fixTime,
});

/** The vehicle's last known position (its latest-state row), when it has one: a travel may start before its vehicle ever reported. */
export function lastPosition(r: {
  latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null; fix_time: Date | null;
}): EventPosition | null {
  if (r.latitude === null || r.longitude === null || r.fix_time === null) return null;
  return { lat: r.latitude, lng: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, fixTime: r.fix_time };
}

// ---------------------------------------------------------------------------------------------
// vehicle.*

/** A stored enter or exit with what its event shows: the geofence's name and the fix's speed and heading. */
export interface LoggedCrossing {
  /** The crossing's row id: it names the event. */
  id: string;
  deviceId: number;
  geofenceId: number;
  geofenceName: string;
  type: 'enter' | 'exit';
  fixTime: Date;
  latitude: number;
  longitude: number;
  speedKmh: number | null;
  heading: number | null;
}

export const geofenceCrossingEvent = (c: LoggedCrossing): NewEvent => ({
  type: c.type === 'enter' ? 'vehicle.geofence.enter' : 'vehicle.geofence.exit',
  occurredAt: c.fixTime,
  deviceId: c.deviceId,
  position: { lat: c.latitude, lng: c.longitude, speedKmh: c.speedKmh, heading: c.heading, fixTime: c.fixTime },
  data: { geofence: { id: c.geofenceId, name: c.geofenceName } },
  dedupeKey: `geofence-event:${c.id}`,
});

export interface StatusChange {
  deviceId: number;
  from: string | null;
  to: string;
  at: Date;
  /** The fix that showed the new status; none for Inactive (silence has no fix). */
  position?: EventPosition;
}

/** `vehicle.status.changed`, named by its device, time and new status. */
export const statusChangedEvent = (c: StatusChange): NewEvent => ({
  type: 'vehicle.status.changed',
  occurredAt: c.at,
  deviceId: c.deviceId,
  position: c.position ?? null,
  data: { from: c.from, to: c.to },
  dedupeKey: `status:${c.deviceId}:${c.at.getTime()}:${c.to}`,
});

/** `vehicle.ignition.on` / `.off` at the fix that showed it. */
export const ignitionEvent = (kind: 'ignition.on' | 'ignition.off', deviceId: number, at: EventPosition): NewEvent => ({
  type: `vehicle.${kind}`, occurredAt: at.fixTime, deviceId, position: at, dedupeKey: `${kind}:${deviceId}:${at.fixTime.getTime()}`,
});

/** `vehicle.overspeed` at the first fix of a speeding stretch. */
export const overspeedEvent = (deviceId: number, at: EventPosition, limitKmh: number | null): NewEvent => ({
  type: 'vehicle.overspeed', occurredAt: at.fixTime, deviceId, position: at,
  data: { speedKmh: roundSpeedKmh(at.speedKmh), limitKmh }, dedupeKey: `overspeed:${deviceId}:${at.fixTime.getTime()}`,
});

/** A harsh manoeuvre as its event shows it (domain/driving/harsh-driving.ts decides them). */
export interface HarshManoeuvre {
  kind: 'acceleration' | 'braking' | 'cornering';
  source: 'computed' | 'tracker';
  /** The tracker's alarm name (source tracker). */
  alarm: string | null;
  /** m/s², positive (a braking's deceleration; a cornering's lateral acceleration); null from a tracker. */
  accelerationMs2: number | null;
  /** The speeds at both ends of the interval (computed). */
  speedBeforeKmh: number | null;
  speedAfterKmh: number | null;
  /** Cornering: the heading change over the interval, degrees, positive clockwise (computed). */
  headingChangeDeg: number | null;
  /** The interval's length, s (computed). */
  intervalS: number | null;
}

const tenth = (v: number | null) => (v === null ? null : roundTo(v, 1));

/**
 * `vehicle.harsh.acceleration` / `.braking` / `.cornering` at the fix that showed it, named by device,
 * time and kind: one manoeuvre per kind and instant, whichever source saw it.
 */
export const harshDrivingEvent = (deviceId: number, h: HarshManoeuvre, at: EventPosition): NewEvent => ({
  type: `vehicle.harsh.${h.kind}`,
  occurredAt: at.fixTime,
  deviceId,
  position: at,
  data: h.kind === 'cornering'
    ? { source: h.source, accelerationMs2: tenth(h.accelerationMs2), speedKmh: h.speedBeforeKmh === null || h.speedAfterKmh === null ? null : roundSpeedKmh((h.speedBeforeKmh + h.speedAfterKmh) / 2), headingChangeDeg: roundHeading(h.headingChangeDeg), intervalS: tenth(h.intervalS), alarm: h.alarm }
    : { source: h.source, accelerationMs2: tenth(h.accelerationMs2), speedBeforeKmh: roundSpeedKmh(h.speedBeforeKmh), speedAfterKmh: roundSpeedKmh(h.speedAfterKmh), intervalS: tenth(h.intervalS), alarm: h.alarm },
  dedupeKey: `harsh:${deviceId}:${at.fixTime.getTime()}:${h.kind}`,
});

/** `vehicle.idle.start`: at the time and place idling began, logged once it lasted IDLE_MIN_S. */
export const idleStartEvent = (deviceId: number, since: EventPosition): NewEvent => ({
  type: 'vehicle.idle.start', occurredAt: since.fixTime, deviceId, position: since, data: {},
  dedupeKey: `idle-start:${deviceId}:${since.fixTime.getTime()}`,
});

/** `vehicle.idle.end` at the fix that ended it, named by when the idling began. */
export const idleEndEvent = (deviceId: number, since: Date, at: EventPosition, idleSeconds: number): NewEvent => ({
  type: 'vehicle.idle.end', occurredAt: at.fixTime, deviceId, position: at, data: { idleSeconds, since: since.toISOString() },
  dedupeKey: `idle-end:${deviceId}:${since.getTime()}`,
});

/** The alarm name a tracker's SOS (panic) button raises; every other alarm is a `vehicle.alarm`. */
export const PANIC_ALARM = 'sos';

export const alarmEventType = (alarm: string): EventType => (alarm === PANIC_ALARM ? 'vehicle.panic' : 'vehicle.alarm');

/**
 * An alarm as an event. It is named by device, time and alarm, the same whether it came with a fix or
 * in a report without one: a tracker that sends the same record again (it missed our ACK) adds nothing.
 */
export const alarmEvent = (deviceId: number, alarm: string, at: Date, position: EventPosition | null): NewEvent => ({
  type: alarmEventType(alarm), occurredAt: at, deviceId, position, data: { alarm }, dedupeKey: `alarm:${deviceId}:${at.getTime()}:${alarm}`,
});

/** A fuel level change as its event shows it (domain/fuel/fuel-events.ts decides them), percentages to 0.1. */
export interface FuelLevelChange {
  kind: 'refill' | 'drop';
  fromPercent: number;
  toPercent: number;
  amountPercent: number;
  /** Over the vehicle's tank capacity; null without one. */
  amountLitres: number | null;
}

/** `vehicle.fuel.refill` / `.drop` at the parked fix it is placed at: one per device, kind and fix, so a replay logs nothing more. */
export const fuelEvent = (deviceId: number, c: FuelLevelChange, at: EventPosition): NewEvent => ({
  type: c.kind === 'refill' ? 'vehicle.fuel.refill' : 'vehicle.fuel.drop', occurredAt: at.fixTime, deviceId, position: at,
  data: { fuel: { fromPercent: c.fromPercent, toPercent: c.toPercent, amountPercent: c.amountPercent, amountLitres: c.amountLitres } },
  dedupeKey: `fuel.${c.kind}:${deviceId}:${at.fixTime.getTime()}`,
});

/** A stored photo as its `vehicle.media` event shows it (the bytes are at `url`). */
export interface StoredMediaRef {
  id: string;
  deviceId: number;
  contentType: string;
  size: number;
  fileName: string;
  commandId: string | null;
  receivedAt: Date;
}

/** The API path that serves a stored photo's bytes. */
export const mediaUrl = (id: string): string => `/api/v1/media/${id}`;

/** One per stored photo, named by its id; position: the vehicle's last known, when it has one. */
export const mediaEvent = (m: StoredMediaRef, position: EventPosition | null): NewEvent => ({
  type: 'vehicle.media', occurredAt: m.receivedAt, deviceId: m.deviceId, position,
  data: { media: { id: m.id, contentType: m.contentType, size: m.size, fileName: m.fileName, url: mediaUrl(m.id), commandId: m.commandId } },
  dedupeKey: `media:${m.id}`,
});

// ---------------------------------------------------------------------------------------------
// vehicle.maintenance.*

/** A maintenance item as its events show it, with the reading that reached its threshold. */
export interface MaintenanceAlert {
  id: number;
  deviceId: number;
  name: string;
  kind: MaintenanceKind;
  interval: number;
  tolerance: number;
  /** km or hours, or `YYYY-MM-DD` for calendar items. */
  nextDue: number | string;
  /** The reading then: km (to 0.1) or hours (to 0.01), or the date (UTC). */
  current: number | string;
}

/** `vehicle.maintenance.due` / `.overdue`, once per item and threshold. */
export const maintenanceEvent = (alert: 'due' | 'overdue', m: MaintenanceAlert, at: Date, position: EventPosition | null): NewEvent => ({
  type: `vehicle.maintenance.${alert}`, occurredAt: at, deviceId: m.deviceId, position,
  data: { maintenance: { id: m.id, name: m.name, kind: m.kind, unit: MAINTENANCE_UNITS[m.kind], interval: m.interval, tolerance: m.tolerance, nextDue: m.nextDue, current: m.current } },
  dedupeKey: `maintenance:${m.id}:${thresholdKey(m.nextDue)}:${alert}`,
});

// ---------------------------------------------------------------------------------------------
// device.*

export interface PresenceConnection {
  connectionId: string;
  protocol: string;
  remoteAddress: string | null;
}

export const deviceOnlineEvent = (deviceId: number, c: PresenceConnection, at: Date): NewEvent => ({
  type: 'device.online', occurredAt: at, deviceId,
  data: { protocol: c.protocol, remoteAddress: c.remoteAddress },
  dedupeKey: `device-online:${deviceId}:${c.connectionId}`,
});

export const deviceOfflineEvent = (deviceId: number, c: PresenceConnection, at: Date, reason: string): NewEvent => ({
  type: 'device.offline', occurredAt: at, deviceId,
  data: { protocol: c.protocol, remoteAddress: c.remoteAddress, reason },
  dedupeKey: `device-offline:${deviceId}:${c.connectionId}`,
});

// ---------------------------------------------------------------------------------------------
// driver.changed

export interface DriverRef {
  id: number;
  name: string;
  identifier: string;
}

export type DriverChangedReason = DriverChange['reason'] | 'assigned' | 'unassigned' | 'driverDeleted';

export interface DriverChanged {
  vehicleId: number;
  at: Date;
  driver: DriverRef | null;
  previousDriver: DriverRef | null;
  source: 'telemetry' | 'manual';
  reason: DriverChangedReason;
  /** The key the tracker read (telemetry). */
  reportedIdentifier: string | null;
  position: EventPosition | null;
}

/** Named by vehicle, instant, the driver it went to and why: a replayed batch or a retried request logs nothing twice. */
export const driverChangedEvent = (e: DriverChanged): NewEvent => ({
  type: 'driver.changed',
  occurredAt: e.at,
  deviceId: e.vehicleId,
  position: e.position,
  data: { driver: e.driver, previousDriver: e.previousDriver, source: e.source, reason: e.reason, reportedIdentifier: e.reportedIdentifier },
  dedupeKey: `driver:${e.vehicleId}:${e.at.getTime()}:${e.driver?.id ?? 'none'}:${e.reason}`,
});

// ---------------------------------------------------------------------------------------------
// travel.*

/** `data.travel` as the API names its status. */
type TravelStatusName = 'In progress' | 'Completed' | 'Cancelled';

interface TravelRef {
  id: number;
  deviceId: number;
}

const minutesLate = (at: Date, expected: Date) => Math.round((at.getTime() - expected.getTime()) / 60_000);

function travelEvent(
  type: EventType, what: string, travel: TravelRef, status: TravelStatusName, at: Date, position: EventPosition | null, extra: Record<string, unknown> = {},
): NewEvent {
  return { type, occurredAt: at, deviceId: travel.deviceId, position, data: { travel: { id: travel.id, status }, ...extra }, dedupeKey: `travel:${travel.id}:${what}` };
}

/** Started at its start time, from where the vehicle last was. */
export const travelStartedEvent = (travel: TravelRef, startTime: Date, position: EventPosition | null) =>
  travelEvent('travel.started', 'started', travel, 'In progress', startTime, position);

export interface ArrivedWaypoint {
  seq: number;
  geofenceName: string;
  expectedArrival: Date;
  arrivedAt: Date;
}

/** A waypoint reached; `status` is the travel's after it (Completed for the last one). */
export const waypointArrivedEvent = (travel: TravelRef, w: ArrivedWaypoint, status: TravelStatusName, position: EventPosition | null) =>
  travelEvent('travel.waypoint.arrived', `waypoint:${w.seq}:arrived`, travel, status, w.arrivedAt, position, {
    waypoint: {
      order: w.seq, geofence: w.geofenceName, expectedArrival: w.expectedArrival.toISOString(), arrivedAt: w.arrivedAt.toISOString(),
      delayMinutes: minutesLate(w.arrivedAt, w.expectedArrival),
    },
  });

export const travelCompletedEvent = (travel: TravelRef, at: Date, position: EventPosition | null) =>
  travelEvent('travel.completed', 'completed', travel, 'Completed', at, position);

export const travelCancelledEvent = (travel: TravelRef, at: Date) => travelEvent('travel.cancelled', 'cancelled', travel, 'Cancelled', at, null);

export interface DelayedWaypoint {
  seq: number;
  geofenceName: string;
  expectedArrival: Date;
  estimatedArrival: Date;
}

/** A pending waypoint's estimate went past its expected arrival by more than the tolerance (once per waypoint). */
export const travelDelayedEvent = (travel: TravelRef, w: DelayedWaypoint, at: Date, position: EventPosition | null) =>
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

// ---------------------------------------------------------------------------------------------
// command.*

/** A command row as its events show it. */
export interface CommandEventSource {
  id: string;
  device_id: number;
  type: string;
  status: string;
  attempts: number;
  response: string | null;
  status_reason: string | null;
  sent_at: Date | null;
  finished_at: Date | null;
}

/** The command as events carry it: enough to follow it without another request. */
export function commandEventData(c: CommandEventSource): Record<string, unknown> {
  return {
    command: {
      id: c.id, type: c.type, status: c.status, attempts: c.attempts, response: c.response,
      error: c.status === 'failed' ? c.status_reason : null,
    },
  };
}

/** One change of a command's state; a send is named by its attempt, every other change once. */
export function commandEvent(kind: 'sent' | 'acknowledged' | 'failed' | 'expired' | 'cancelled', c: CommandEventSource): NewEvent {
  const at = c.status === 'sent' ? c.sent_at : c.finished_at;
  return {
    type: `command.${kind}`, occurredAt: at ?? new Date(), deviceId: c.device_id, data: commandEventData(c),
    dedupeKey: `command:${c.id}:${kind === 'sent' ? `sent:${c.attempts}` : kind}`,
  };
}

// ---------------------------------------------------------------------------------------------
// webhook.*

export interface DisabledWebhook {
  id: number;
  accountId: number;
  userId: number;
  mode: 'live' | 'test';
  url: string;
}

/** Named by the delivery attempt that disabled it. */
export const webhookDisabledEvent = (webhook: DisabledWebhook, reason: string, at: Date, failed: { deliveryId: string; attempt: number }): NewEvent => ({
  type: 'webhook.disabled', occurredAt: at, accountId: webhook.accountId, userId: webhook.userId, mode: webhook.mode,
  data: { webhook: { id: webhook.id, url: webhook.url }, reason }, dedupeKey: `webhook-disabled:${webhook.id}:${failed.deliveryId}:${failed.attempt}`,
});

/** The ping POST /webhooks/{id}/test queues for one webhook: delivered, never logged. */
export const webhookTestPayload = (deliveryId: string, webhookId: number, at: Date): EventPayload => ({
  id: `test_${deliveryId}`, type: 'webhook.test', timestamp: at.toISOString(),
  data: { webhook: { id: webhookId }, message: 'Test event from fleetcore' },
});

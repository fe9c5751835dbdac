/**
 * Every kind of event the system decides, in one place: the log, `GET /events`, the stream, webhook
 * subscriptions and the README's catalog all read this list. A kind is named `<subject>.<what>`
 * (`vehicle.geofence.enter`), so a subscription can take a whole family with a trailing `*`.
 */
export const EVENT_TYPES = [
  'vehicle.geofence.enter',
  'vehicle.geofence.exit',
  'vehicle.status.changed',
  'vehicle.ignition.on',
  'vehicle.ignition.off',
  'vehicle.overspeed',
  'vehicle.alarm',
  'vehicle.panic',
  'device.online',
  'device.offline',
  'travel.started',
  'travel.waypoint.arrived',
  'travel.completed',
  'travel.cancelled',
  'travel.delayed',
  'webhook.disabled',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Kinds that are delivered but never logged: a webhook's test ping concerns only that webhook. */
export const UNLOGGED_EVENT_TYPES: ReadonlySet<EventType> = new Set(['webhook.test']);

export interface EventKindInfo {
  /** When the event happens, for the README and the OpenAPI document. */
  description: string;
  /** What `data` holds besides `vehicle` and `position`. */
  example: Record<string, unknown>;
  /** Whether `data.vehicle` is present. */
  vehicle: boolean;
  /** Whether `data.position` is present (when the device had a fix). */
  position: boolean;
}

const geofence = { geofence: { id: 12, name: 'Depot North' } };
const travel = { travel: { id: 345, status: 'In progress' } };

export const EVENT_CATALOG: Record<EventType, EventKindInfo> = {
  'vehicle.geofence.enter': { description: 'The vehicle entered a geofence (after the geofence\'s enter dwell time, if set). Time: the first fix inside.', example: geofence, vehicle: true, position: true },
  'vehicle.geofence.exit': { description: 'The vehicle left a geofence (after its exit dwell time, if set). Time: the first fix outside.', example: geofence, vehicle: true, position: true },
  'vehicle.status.changed': { description: 'The vehicle\'s status moved between Moving, Stopped, Off and Inactive (Inactive: silent past INACTIVE_AFTER_MINUTES).', example: { from: 'Stopped', to: 'Moving' }, vehicle: true, position: true },
  'vehicle.ignition.on': { description: 'A fix reported ignition on after one that reported it off (or the first fix reporting it).', example: {}, vehicle: true, position: true },
  'vehicle.ignition.off': { description: 'A fix reported ignition off after one that reported it on.', example: {}, vehicle: true, position: true },
  'vehicle.overspeed': { description: 'The vehicle went over its speed limit (the device\'s, else the account\'s). One event per speeding stretch: it must drop below the limit minus the hysteresis before another.', example: { speedKmh: 97, limitKmh: 80 }, vehicle: true, position: true },
  'vehicle.alarm': { description: 'The tracker raised an alarm other than SOS: power cut, tampering, low battery, vibration, geofence, and the other names the protocols decode.', example: { alarm: 'powerCut' }, vehicle: true, position: true },
  'vehicle.panic': { description: 'The tracker\'s SOS (panic) button was pressed.', example: { alarm: 'sos' }, vehicle: true, position: true },
  'device.online': { description: 'The tracker opened a connection and identified itself.', example: { protocol: 'teltonika', remoteAddress: '203.0.113.7' }, vehicle: true, position: false },
  'device.offline': { description: 'The tracker\'s connection closed: by the tracker, by an error, by the idle timeout, or replaced by a newer connection.', example: { protocol: 'teltonika', reason: 'idle timeout' }, vehicle: true, position: false },
  'travel.started': { description: 'A scheduled travel reached its start time and is In progress.', example: travel, vehicle: true, position: true },
  'travel.waypoint.arrived': { description: 'The vehicle entered a waypoint\'s geofence (waypoints in order).', example: { ...travel, waypoint: { order: 2, geofence: 'Depot North', expectedArrival: '2024-05-01T14:30:00.000Z', arrivedAt: '2024-05-01T14:26:10.000Z', delayMinutes: -4 } }, vehicle: true, position: true },
  'travel.completed': { description: 'The vehicle arrived at the travel\'s last waypoint.', example: { travel: { id: 345, status: 'Completed' } }, vehicle: true, position: true },
  'travel.cancelled': { description: 'A Scheduled or In progress travel was cancelled (DELETE /travels/{id}).', example: { travel: { id: 345, status: 'Cancelled' } }, vehicle: true, position: false },
  'travel.delayed': { description: 'A pending waypoint\'s live estimate went past its expected arrival by more than the on-time tolerance. Once per waypoint.', example: { ...travel, waypoint: { order: 3, geofence: 'Client B', expectedArrival: '2024-05-01T16:00:00.000Z', estimatedArrival: '2024-05-01T16:22:00.000Z', delayMinutes: 22 } }, vehicle: true, position: true },
  'webhook.disabled': { description: 'A webhook was disabled: its receiver answered 410 Gone, or failed too many events in a row.', example: { webhook: { id: 7, url: 'https://example.com/hooks/fleet' }, reason: 'receiver answered 410 Gone' }, vehicle: false, position: false },
  'webhook.test': { description: 'Sent by POST /webhooks/{id}/test to that webhook only; not logged.', example: { webhook: { id: 7 }, message: 'Test event from fleetcore' }, vehicle: false, position: false },
};

export function isEventType(name: string): name is EventType {
  return (EVENT_TYPES as readonly string[]).includes(name);
}

/** A subscription or filter entry: a kind, a family ending in `*` (`vehicle.geofence.*`), or `*` for all. */
export interface EventTypePatterns {
  exact: EventType[];
  /** Prefixes without the `*`: `vehicle.geofence.`, or `` for everything. */
  prefixes: string[];
}

export class EventTypePatternError extends Error {
  override name = 'EventTypePatternError';
}

/** Parses a list of kinds and families; a name that matches no kind is an error saying which. */
export function parseEventTypePatterns(names: readonly string[]): EventTypePatterns {
  const exact = new Set<EventType>();
  const prefixes = new Set<string>();
  for (const raw of names) {
    const name = raw.trim();
    if (!name) continue;
    if (name.endsWith('*')) {
      const prefix = name.slice(0, -1);
      if (prefix.includes('*') || !EVENT_TYPES.some((t) => t.startsWith(prefix))) {
        throw new EventTypePatternError(`"${name}" matches no event type; known: ${EVENT_TYPES.join(', ')}`);
      }
      prefixes.add(prefix);
    } else if (isEventType(name)) {
      exact.add(name);
    } else {
      throw new EventTypePatternError(`unknown event type "${name}"; known: ${EVENT_TYPES.join(', ')} (a trailing * matches a family)`);
    }
  }
  return { exact: [...exact], prefixes: [...prefixes] };
}

export function matchesEventType(patterns: EventTypePatterns, type: string): boolean {
  return patterns.exact.includes(type as EventType) || patterns.prefixes.some((p) => type.startsWith(p));
}

/** Every kind a set of patterns selects, for telling a user what a subscription covers. */
export function eventTypesMatching(patterns: EventTypePatterns): EventType[] {
  return EVENT_TYPES.filter((t) => matchesEventType(patterns, t));
}

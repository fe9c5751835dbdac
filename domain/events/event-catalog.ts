import { DomainError } from '../domain-error.ts';

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
  'vehicle.maintenance.due',
  'vehicle.maintenance.overdue',
  'vehicle.harsh.acceleration',
  'vehicle.harsh.braking',
  'vehicle.harsh.cornering',
  'vehicle.idle.start',
  'vehicle.idle.end',
  'vehicle.fuel.refill',
  'vehicle.fuel.drop',
  'vehicle.media',
  'vehicle.position',
  'device.online',
  'device.offline',
  'driver.changed',
  'travel.started',
  'travel.waypoint.arrived',
  'travel.completed',
  'travel.cancelled',
  'travel.delayed',
  'command.sent',
  'command.acknowledged',
  'command.failed',
  'command.expired',
  'command.cancelled',
  'webhook.disabled',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Kinds that are delivered but never logged: a webhook's test ping concerns only that webhook. */
export const UNLOGGED_EVENT_TYPES: ReadonlySet<EventType> = new Set(['webhook.test', 'vehicle.position']);

/**
 * Kinds delivered only to a subscription or stream that names them exactly: `*` and `vehicle.*` do not
 * take them. A stored fix is a `vehicle.position` (thousands a second); a subscriber that asked for
 * every event must not start receiving them.
 */
export const OPT_IN_EVENT_TYPES: ReadonlySet<EventType> = new Set(['vehicle.position']);

/**
 * The specification's six webhook categories, and which kinds make each: one place, so the docs'
 * table (checked by a test) and anything that groups events say the same. Every kind is in exactly
 * one category but `webhook.test`, a ping that concerns one webhook and no vehicle.
 */
export const EVENT_CATEGORIES = ['positions', 'alerts', 'geofences', 'maintenance', 'driving', 'panic'] as const;
export type EventCategory = (typeof EVENT_CATEGORIES)[number];

export const EVENT_CATEGORY: Record<EventType, EventCategory | null> = {
  'vehicle.position': 'positions',
  'vehicle.alarm': 'alerts',
  'vehicle.status.changed': 'alerts',
  'vehicle.ignition.on': 'alerts',
  'vehicle.ignition.off': 'alerts',
  'vehicle.fuel.refill': 'alerts',
  'vehicle.fuel.drop': 'alerts',
  'vehicle.media': 'alerts',
  'device.online': 'alerts',
  'device.offline': 'alerts',
  'command.sent': 'alerts',
  'command.acknowledged': 'alerts',
  'command.failed': 'alerts',
  'command.expired': 'alerts',
  'command.cancelled': 'alerts',
  'webhook.disabled': 'alerts',
  'vehicle.geofence.enter': 'geofences',
  'vehicle.geofence.exit': 'geofences',
  'travel.started': 'geofences',
  'travel.waypoint.arrived': 'geofences',
  'travel.completed': 'geofences',
  'travel.cancelled': 'geofences',
  'travel.delayed': 'geofences',
  'vehicle.maintenance.due': 'maintenance',
  'vehicle.maintenance.overdue': 'maintenance',
  'vehicle.overspeed': 'driving',
  'vehicle.harsh.acceleration': 'driving',
  'vehicle.harsh.braking': 'driving',
  'vehicle.harsh.cornering': 'driving',
  'vehicle.idle.start': 'driving',
  'vehicle.idle.end': 'driving',
  'driver.changed': 'driving',
  'vehicle.panic': 'panic',
  'webhook.test': null,
};

/** The kinds of one category, in the catalog's order. */
export function eventTypesOfCategory(category: EventCategory): EventType[] {
  return EVENT_TYPES.filter((t) => EVENT_CATEGORY[t] === category);
}

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
const maintenanceExample = { id: 31, name: 'Oil change', kind: 'odometer', unit: 'km', interval: 10_000, tolerance: 1_000, nextDue: 130_000, current: 130_004.2 };
const command = (status: string, more: Record<string, unknown> = {}) => ({
  command: { id: '88', type: 'engine_stop', status, attempts: 1, response: null, error: null, ...more },
});

export const EVENT_CATALOG: Record<EventType, EventKindInfo> = {
  'vehicle.geofence.enter': { description: 'The vehicle entered a geofence (after the geofence\'s enter dwell time, if set). Time: the first fix inside.', example: geofence, vehicle: true, position: true },
  'vehicle.geofence.exit': { description: 'The vehicle left a geofence (after its exit dwell time, if set). Time: the first fix outside.', example: geofence, vehicle: true, position: true },
  'vehicle.status.changed': { description: 'The vehicle\'s status moved between Moving, Stopped, Off and Inactive (Inactive: silent past INACTIVE_AFTER_MINUTES).', example: { from: 'Stopped', to: 'Moving' }, vehicle: true, position: true },
  'vehicle.ignition.on': { description: 'A fix reported ignition on after one that reported it off, or is the first fix to report ignition at all. Fixes that report no ignition, and reports without a fix, change nothing. Time: that fix.', example: {}, vehicle: true, position: true },
  'vehicle.ignition.off': { description: 'A fix reported ignition off after one that reported it on (a first report of off logs nothing: a parked vehicle is the resting case). Time: that fix.', example: {}, vehicle: true, position: true },
  'vehicle.overspeed': { description: 'A valid fix went over the vehicle\'s speed limit (its own, else its account\'s; with neither, no events). One event per speeding stretch: the stretch ends at the first valid fix below the limit minus OVERSPEED_HYSTERESIS_KMH (default 5). Time: the first fix over.', example: { speedKmh: 97, limitKmh: 80 }, vehicle: true, position: true },
  'vehicle.alarm': { description: 'The tracker raised an alarm other than SOS (power cut, tampering, low battery, vibration, overspeed, movement, removing, low power, general, and the other names the protocols decode), with a fix (position present) or in a report without one (no position). Once per vehicle, time and alarm name, so a resent frame logs nothing more. Time: the fix, else the device\'s time for the report, else when the server received it.', example: { alarm: 'powerCut' }, vehicle: true, position: true },
  'vehicle.panic': { description: 'The tracker\'s SOS (panic) button was pressed: alarm `sos`, logged like vehicle.alarm.', example: { alarm: 'sos' }, vehicle: true, position: true },
  'vehicle.maintenance.due': { description: 'The vehicle reached a maintenance item\'s next threshold (docs/api/maintenance.md): its odometer (the tracker\'s own, else the server\'s) or engine hours as GET /vehicles/{id}/accumulators reports them, or the date (UTC). Once per item and threshold: replays and late fixes never log it again; a service recorded moves the threshold. Found by the engine\'s check every MAINTENANCE_CHECK_S (60 s). Time: when the check found it; position: the vehicle\'s last known.', example: { maintenance: maintenanceExample }, vehicle: true, position: true },
  'vehicle.maintenance.overdue': { description: 'The vehicle went past a maintenance item\'s threshold by its tolerance (`tolerance`, in the item\'s unit; default a tenth of the interval) with no service recorded. Once per item and threshold, after its vehicle.maintenance.due (both at once for a vehicle found already past). Time: when the engine\'s check found it; position: the vehicle\'s last known.', example: { maintenance: { ...maintenanceExample, current: 131_012.4 } }, vehicle: true, position: true },
  'vehicle.harsh.acceleration': { description: 'Harsh acceleration: `source` `computed` when the speed rose by HARSH_ACCELERATION_MS2 (2.5 m/s²) or more per second between two valid fixes 1 to HARSH_MAX_GAP_S (10) s apart (`accelerationMs2`, `speedBeforeKmh`, `speedAfterKmh` over `intervalS`), `tracker` for the tracker\'s own alarm (`hardAcceleration`, `acceleration`; the figures null). One per manoeuvre, whichever source saw it: another of the same kind within HARSH_SAME_EVENT_S (5 s) of it, computed or the tracker\'s, continues it and logs nothing. A tracker\'s alarm still also logs its vehicle.alarm. Late fixes (behind the engine\'s cursor) log none. Time and position: the fix that showed it.', example: { source: 'computed', accelerationMs2: 3.4, speedBeforeKmh: 12, speedAfterKmh: 36.5, intervalS: 2, alarm: null }, vehicle: true, position: true },
  'vehicle.harsh.braking': { description: 'Harsh braking: `source` `computed` when the speed fell by HARSH_BRAKING_MS2 (3 m/s²) or more per second between two valid fixes 1 to HARSH_MAX_GAP_S (10) s apart (`accelerationMs2` is the deceleration, positive), `tracker` for the tracker\'s own alarm (`hardBraking`, `braking`; the figures null). One per manoeuvre, whichever source saw it: another of the same kind within HARSH_SAME_EVENT_S (5 s) of it, computed or the tracker\'s, continues it and logs nothing. A tracker\'s alarm still also logs its vehicle.alarm. Late fixes (behind the engine\'s cursor) log none. Time and position: the fix that showed it.', example: { source: 'computed', accelerationMs2: 5.6, speedBeforeKmh: 62, speedAfterKmh: 21.5, intervalS: 2, alarm: null }, vehicle: true, position: true },
  'vehicle.harsh.cornering': { description: 'Harsh cornering: `source` `computed` when the lateral acceleration v·ω (mean speed × heading change per second) between two valid fixes 1 to HARSH_MAX_GAP_S (10) s apart, both at HARSH_CORNERING_MIN_SPEED_KMH (20) or faster, reached HARSH_CORNERING_MS2 (3 m/s²) (`speedKmh` the mean speed, `headingChangeDeg` positive clockwise), `tracker` for the tracker\'s own alarm (`hardCornering`, `cornering`; the figures null). One per manoeuvre, whichever source saw it: another of the same kind within HARSH_SAME_EVENT_S (5 s) of it, computed or the tracker\'s, continues it and logs nothing. A tracker\'s alarm still also logs its vehicle.alarm. Late fixes (behind the engine\'s cursor) log none. Time and position: the fix that showed it.', example: { source: 'computed', accelerationMs2: 4.1, speedKmh: 38, headingChangeDeg: 35, intervalS: 1, alarm: null }, vehicle: true, position: true },
  'vehicle.idle.start': { description: 'The vehicle has idled (ignition on, not moving: below MOVING_SPEED_KMH) for IDLE_MIN_S (300 s). Logged then; time and position: when and where the idling began. Late fixes log none.', example: {}, vehicle: true, position: true },
  'vehicle.idle.end': { description: 'An idling that logged vehicle.idle.start ended: the ignition went off, the vehicle moved, or no fix came for TRIP_MAX_GAP_S (then at the last fix before the silence). `idleSeconds` is its length, `since` when it began. Time and position: the fix that ended it.', example: { idleSeconds: 540, since: '2024-05-01T14:21:00.000Z' }, vehicle: true, position: true },
  'vehicle.fuel.refill': { description: 'The fuel level rose by more than FUEL_REFILL_MIN_PERCENT (10) percentage points while the vehicle was parked, or in the first readings after it drove off (docs/engine.md, "Fuel"). Levels are the median of the last 5 readings, so sloshing and sensor jitter fire nothing; the event is logged once the level has settled, from the level before the stop to the highest after it. `amountLitres` needs the vehicle\'s `fuel_tank_litres` (null without it). Only trackers that report a level (docs/trackers.md); late fixes log none. Time and position: the last parked fix when it was seen.', example: { fuel: { fromPercent: 18.5, toPercent: 94, amountPercent: 75.5, amountLitres: 60.4 } }, vehicle: true, position: true },
  'vehicle.fuel.drop': { description: 'The fuel level fell by more than FUEL_DROP_MIN_PERCENT (8) percentage points while the vehicle was parked (ignition off or still), or in the first readings after it drove off from a stop: possible theft or a leak; a fall while driving is consumption and logs nothing. Smoothed, settled and measured like vehicle.fuel.refill. Time and position: the last parked fix when it was seen.', example: { fuel: { fromPercent: 71.2, toPercent: 52, amountPercent: 19.2, amountLitres: 15.4 } }, vehicle: true, position: true },
  'vehicle.position': { description: 'A fix was stored: every one, for a live feed instead of polling. Opt-in: delivered only to a webhook or stream that names `vehicle.position` itself (never through `*` or `vehicle.*`), and never logged (GET /events has none; missed ones are read from the position history). Webhooks get them in batches (`data.events`, several positions in one signed request). Time: the fix; `data.position` adds the fix\'s other fields.', example: { position: { lat: 19.4326, lng: -99.1332, speedKmh: 32, heading: 90, fixTime: '2024-05-01T14:30:00.000Z', altitude: 2240, satellites: 11, valid: true, ignition: true, receivedAt: '2024-05-01T14:30:01.250Z' } }, vehicle: true, position: true },
  'vehicle.media': { description: 'The tracker sent a photo and it was stored (JPEG or PNG, checked from its bytes, at most MEDIA_MAX_BYTES): `media.url` downloads it (media:read). `commandId` is the take_photo command it answers, null for one the tracker took on its own. Once per stored photo. Time: when its last byte arrived; position: the vehicle\'s last known.', example: { media: { id: '123', contentType: 'image/jpeg', size: 48213, fileName: 'camera_picture.jpg', url: '/api/v1/media/123', commandId: '88' } }, vehicle: true, position: true },
  'device.online': { description: 'The tracker opened a TCP connection and identified itself (OsmAnd phones send over HTTP without a connection: no presence events). Time: the server\'s.', example: { protocol: 'teltonika', remoteAddress: '203.0.113.7' }, vehicle: true, position: false },
  'device.offline': { description: 'The tracker\'s connection closed: reason `closed by the tracker`, `connection error (CODE)`, `idle timeout`, `replaced by a newer connection` (logged before the newer one\'s device.online), `server shutdown`, or why the server closed it (`malformed frame`, ...). A connection that closes after a newer one took over logs nothing. Time: the server\'s.', example: { protocol: 'teltonika', remoteAddress: '203.0.113.7', reason: 'idle timeout' }, vehicle: true, position: false },
  'driver.changed': {
    description: 'The vehicle\'s driver changed: a fix carried a driver key (iButton, RFID card, licence) of a registered driver (reason `identified`) or of none (`unknownIdentifier`: the assignment ends, `driver` is null), the driver was identified on another vehicle (`otherVehicle`), or through the API (`assigned`, `unassigned`, `driverDeleted`). `source` is `telemetry` or `manual`; `reportedIdentifier` is the key the tracker read. Time: the fix (or the assignment\'s `since`); position: that fix (the vehicle\'s last known for manual changes; none for `otherVehicle`).',
    example: { driver: { id: 4, name: 'Ana López', identifier: '01C68011010000C7' }, previousDriver: null, source: 'telemetry', reason: 'identified', reportedIdentifier: '01C68011010000C7' },
    vehicle: true,
    position: true,
  },
  'travel.started': { description: 'A scheduled travel reached its start time and is In progress. Time: the start time; position: the vehicle\'s last known, if it ever reported.', example: travel, vehicle: true, position: true },
  'travel.waypoint.arrived': { description: 'The vehicle entered the geofence of the travel\'s next pending waypoint (waypoints complete in order; waypoint 1, Current position, logs none). Time: the fix of the enter; `status` is the travel\'s after it.', example: { ...travel, waypoint: { order: 2, geofence: 'Depot North', expectedArrival: '2024-05-01T14:30:00.000Z', arrivedAt: '2024-05-01T14:26:10.000Z', delayMinutes: -4 } }, vehicle: true, position: true },
  'travel.completed': { description: 'The vehicle arrived at the travel\'s last waypoint. Time: that arrival.', example: { travel: { id: 345, status: 'Completed' } }, vehicle: true, position: true },
  'travel.cancelled': { description: 'A Scheduled or In progress travel was cancelled (DELETE /travels/{id}). Time: the cancel.', example: { travel: { id: 345, status: 'Cancelled' } }, vehicle: true, position: false },
  'travel.delayed': { description: 'A pending waypoint\'s live estimate went past its expected arrival by more than ON_TIME_TOLERANCE_MINUTES (the rule behind the API\'s "min late (est.)"). Once per waypoint, even if the estimate recovers and slips again. Time: the ETA refresh; position: the vehicle\'s last known.', example: { ...travel, waypoint: { order: 3, geofence: 'Client B', expectedArrival: '2024-05-01T16:00:00.000Z', estimatedArrival: '2024-05-01T16:22:00.000Z', delayMinutes: 22 } }, vehicle: true, position: true },
  'command.sent': { description: 'A command\'s bytes were written to the tracker\'s connection (`attempts` counts the sends; a command unanswered on a connection that closed is sent again on the next). Time: the send.', example: command('sent'), vehicle: true, position: false },
  'command.acknowledged': { description: 'The tracker answered the command; `response` is its answer as text (for take_photo, `media <id>`: the picture was stored, see vehicle.media). Time: when the answer arrived.', example: command('acknowledged', { response: 'DOUT1:1 Timeout:INFINITY' }), vehicle: true, position: false },
  'command.failed': { description: 'The command will not be carried out: the tracker answered with an error, it went unanswered after its last attempt, or the protocol the tracker connected with cannot express it. `error` says which. Time: the failure.', example: command('failed', { attempts: 3, error: 'no answer within 30 s, 3 of 3 attempts' }), vehicle: true, position: false },
  'command.expired': { description: 'The command\'s time to live (`ttlSeconds`) passed before the tracker answered it. Time: when it was found expired (within a few seconds of `expiresAt`).', example: command('expired', { attempts: 0 }), vehicle: true, position: false },
  'command.cancelled': { description: 'A queued command was cancelled (DELETE /commands/{id}) before it was sent. Time: the cancel.', example: command('cancelled', { attempts: 0 }), vehicle: true, position: false },
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

export class EventTypePatternError extends DomainError {
  override name = 'EventTypePatternError';
  constructor(message: string) {
    super('invalid', message);
  }
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
      if (!EVENT_TYPES.some((t) => t.startsWith(prefix) && !OPT_IN_EVENT_TYPES.has(t))) {
        const named = EVENT_TYPES.filter((t) => t.startsWith(prefix));
        throw new EventTypePatternError(`"${name}" matches only ${named.join(', ')}, which a family never includes: name ${named.length > 1 ? 'them' : 'it'} exactly`);
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

/** Whether the patterns select the kind; an opt-in kind (OPT_IN_EVENT_TYPES) only when named exactly. */
export function matchesEventType(patterns: EventTypePatterns, type: string): boolean {
  if (patterns.exact.includes(type as EventType)) return true;
  return !OPT_IN_EVENT_TYPES.has(type as EventType) && patterns.prefixes.some((p) => type.startsWith(p));
}

/** Every kind a set of patterns selects, for telling a user what a subscription covers. */
export function eventTypesMatching(patterns: EventTypePatterns): EventType[] {
  return EVENT_TYPES.filter((t) => matchesEventType(patterns, t));
}

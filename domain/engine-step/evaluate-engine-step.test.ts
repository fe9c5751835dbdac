import { describe, expect, it } from 'vitest';
import { EMPTY_DRIVER_SNAPSHOT, keyOf, type DriverSnapshot } from '../drivers/driver-step.ts';
import { GeofenceIndex } from '../geofences/geofence-index.ts';
import type { StepTravel } from '../travels/travel-step.ts';
import { DEFAULT_TRIP_SETTINGS } from '../trips/device-trips.ts';
import type { EngineFix, EngineState } from './engine-state.ts';
import { evaluateEngineStep, type EngineStepInput, type EngineStepSettings } from './evaluate-engine-step.ts';

// Geofence 1, the depot, spans lng -99.14..-99.13 at lat 19.43..19.44; the vehicle drives along lat 19.435.
const DEPOT = 1;
const ring = [[-99.14, 19.43], [-99.13, 19.43], [-99.13, 19.44], [-99.14, 19.44], [-99.14, 19.43]];
const index = new GeofenceIndex([{ id: DEPOT, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } }]);
const geofences = { index: () => index, dwellRules: new Map() };
const OUT = -99.12;
const IN = -99.135;

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const DEVICE = 7;

function state(overrides: Partial<EngineState> = {}): EngineState {
  return {
    deviceId: DEVICE, accountId: 1, mode: 'live', cursor: null, inside: [], pending: [], status: null, hasLateFixes: false,
    ignition: null, overspeed: false, speedLimitKmh: null, segment: null, ...overrides,
  };
}

/** A fix every 10 s: [longitude, speed, ignition, extra]. */
function drive(...points: Array<[number, number, boolean | null, Partial<EngineFix>?]>): EngineFix[] {
  return points.map(([lng, speedKmh, ignition, extra], i) => ({
    deviceId: DEVICE, fixTime: at(i * 10), valid: true, latitude: 19.435, longitude: lng, speedKmh, heading: 90, ignition,
    alarm: null, odometerKm: null, driverIdentifier: null, ...extra,
  }));
}

function travel(overrides: Partial<StepTravel> = {}): StepTravel {
  return {
    id: 40, deviceId: DEVICE, due: false, startTime: at(-60), startedAt: at(-60), lastPosition: null,
    waypoints: [
      { seq: 1, geofenceId: null, status: 'completed', geofenceName: 'Current position', expectedArrival: at(-60), starting: true },
      { seq: 2, geofenceId: DEPOT, status: 'pending', geofenceName: 'Depot', expectedArrival: at(60), starting: false },
    ],
    ...overrides,
  };
}

const SETTINGS: EngineStepSettings = {
  status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, overspeedHysteresisKmh: 5,
  trips: DEFAULT_TRIP_SETTINGS, now: at(600),
};

function step(fixes: EngineFix[], more: Partial<Omit<EngineStepInput, 'fixes'>> = {}, settings = SETTINGS) {
  return evaluateEngineStep(
    { states: [state()], travels: [], drivers: EMPTY_DRIVER_SNAPSHOT, geofences, ...more, fixes: new Map(fixes.length ? [[DEVICE, fixes]] : []) },
    settings,
  );
}

const summary = (events: ReadonlyArray<{ type: string; occurredAt: Date }>) => events.map((e) => `${e.type} @${(e.occurredAt.getTime() - T0) / 1000}`);

describe('evaluateEngineStep', () => {
  it.each([
    {
      what: 'a drive through a geofence: an enter, an exit, one visit',
      fixes: drive([OUT, 30, true], [IN, 30, true], [IN, 30, true], [OUT, 30, true]),
      crossings: ['enter 1 @10', 'exit 1 @30'],
      events: ['vehicle.ignition.on @0'],
      statuses: ['vehicle.status.changed @0'],
    },
    {
      what: 'ignition off, on, off: the first off is the resting case; each fix\'s status in order',
      fixes: drive([OUT, 0, false], [OUT, 0, true], [OUT, 20, true], [OUT, 0, false]),
      crossings: [],
      events: ['vehicle.ignition.on @10', 'vehicle.ignition.off @30'],
      statuses: ['vehicle.status.changed @0', 'vehicle.status.changed @10', 'vehicle.status.changed @20', 'vehicle.status.changed @30'],
    },
    {
      what: 'alarms with a fix: SOS is a panic, anything else an alarm',
      fixes: drive([OUT, 0, null, { alarm: 'sos' }], [OUT, 0, null, { alarm: 'powerCut' }]),
      crossings: [],
      events: ['vehicle.panic @0', 'vehicle.alarm @10'],
      statuses: ['vehicle.status.changed @0'],
    },
  ])('$what', ({ fixes, crossings, events, statuses }) => {
    const d = step(fixes);
    expect(d.crossings.map((c) => `${c.type} ${c.geofenceId} @${(c.fixTime.getTime() - T0) / 1000}`)).toEqual(crossings);
    expect(summary(d.events)).toEqual(events);
    expect(summary(d.statusEvents)).toEqual(statuses);
    expect(d.states).toHaveLength(1);
    expect(d.states[0]!.cursor).toEqual(fixes.at(-1)!.fixTime);
  });

  it('pairs the crossings into visits, and keeps a device inside across steps', () => {
    const first = step(drive([OUT, 30, null], [IN, 30, null], [IN, 30, null], [OUT, 30, null], [IN, 30, null]));
    expect(first.visits).toEqual({
      close: [],
      open: [
        { deviceId: DEVICE, geofenceId: DEPOT, entry: at(10), exit: at(30) },
        { deviceId: DEVICE, geofenceId: DEPOT, entry: at(40), exit: null },
      ],
    });
    expect(first.states[0]!.inside).toEqual([DEPOT]);
    const later = drive([IN, 30, null], [OUT, 30, null]).map((f) => ({ ...f, fixTime: new Date(f.fixTime.getTime() + 100_000) }));
    const next = evaluateEngineStep(
      { states: [state({ ...first.states[0]!, cursor: at(40) })], fixes: new Map([[DEVICE, later]]), travels: [], drivers: EMPTY_DRIVER_SNAPSHOT, geofences },
      SETTINGS,
    );
    expect(next.visits).toEqual({ close: [{ deviceId: DEVICE, geofenceId: DEPOT, exit: at(110) }], open: [] });
  });

  it('decides the same whether the fixes come in one step or two, and the same again when run again', () => {
    const fixes = drive([OUT, 0, false], [IN, 40, true], [IN, 90, true], [OUT, 0, false], [IN, 30, true, { alarm: 'sos' }]);
    const input = { travels: [travel()], states: [state({ speedLimitKmh: 80 })] };
    const whole = step(fixes, input);
    expect(step(fixes, input)).toEqual(whole);
    const first = step(fixes.slice(0, 2), input);
    const next = { ...state({ speedLimitKmh: 80 }), ...first.states[0]!, segment: first.states[0]!.segment! };
    const travelAfter = { ...travel(), waypoints: travel().waypoints.map((w) => (first.arrivals.some((a) => a.seq === w.seq) ? { ...w, status: 'completed' as const } : w)) };
    const second = step(fixes.slice(2), { travels: [travelAfter], states: [next] });
    const all = (d: typeof whole) => [...d.crossings.map((c) => `${c.type} ${c.fixTime.getTime()}`), ...summary(d.events), ...summary(d.statusEvents)];
    expect([...all(first), ...all(second)].sort()).toEqual(all(whole).sort());
    expect(second.states).toEqual(whole.states);
  });

  it('completes a travel\'s waypoint when the vehicle enters its geofence, at that fix, and the travel with its last', () => {
    const d = step(drive([OUT, 30, null], [IN, 25, null]), { travels: [travel()] });
    expect(d.arrivals).toEqual([{ travelId: 40, seq: 2, arrivedAt: at(10) }]);
    expect(d.completions).toEqual([{ travelId: 40, at: at(10) }]);
    expect(d.progressedTravels).toEqual([40]);
    expect(summary(d.events)).toEqual(['travel.waypoint.arrived @10', 'travel.completed @10']);
    expect(d.events[0]).toMatchObject({
      deviceId: DEVICE, dedupeKey: 'travel:40:waypoint:2:arrived', position: { lng: IN, speedKmh: 25 },
      data: { travel: { id: 40, status: 'Completed' }, waypoint: { order: 2, geofence: 'Depot', delayMinutes: -1 } },
    });
  });

  it('starts a due travel before its vehicle\'s fixes, so an enter right after the start counts', () => {
    const due = travel({ due: true, startedAt: null, startTime: at(5), lastPosition: { lat: 19.435, lng: OUT, speedKmh: 0, heading: null, fixTime: at(0) } });
    due.waypoints[0]!.status = 'pending';
    const d = step(drive([OUT, 30, null], [IN, 30, null]), { travels: [due] });
    expect(d.travelStarts).toEqual([{ travelId: 40, position: due.lastPosition }]);
    expect(summary(d.events)).toEqual(['travel.started @5', 'travel.waypoint.arrived @10', 'travel.completed @10']);
    // An enter before the start time does not count.
    const late = step(drive([OUT, 30, null], [IN, 30, null]), { travels: [{ ...due, startTime: at(20) }] });
    expect(late.arrivals).toEqual([]);
  });

  it('logs one overspeed per speeding stretch, against the vehicle\'s limit', () => {
    const d = step(drive([OUT, 70, null], [OUT, 90, null], [OUT, 78, null], [OUT, 91, null], [OUT, 60, null], [OUT, 85, null]), { states: [state({ speedLimitKmh: 80 })] });
    expect(summary(d.events)).toEqual(['vehicle.overspeed @10', 'vehicle.overspeed @50']);
    expect(d.events[0]!.data).toEqual({ speedKmh: 90, limitKmh: 80 });
    expect(d.states[0]!.overspeed).toBe(true);
  });

  it('assigns the driver a key names, with the change\'s event naming both drivers', () => {
    const drivers: DriverSnapshot = {
      vehicles: new Map([[DEVICE, { driverId: 3, boundary: T0 - 3_600_000 }]]),
      drivers: new Map([[5, { id: 5, vehicleId: null, boundary: null }]]),
      byKey: new Map([[keyOf(DEVICE, 'CARD-5'), 5]]),
      refs: new Map([[3, { id: 3, name: 'Ana', identifier: 'CARD-3' }], [5, { id: 5, name: 'Ben', identifier: 'CARD-5' }]]),
    };
    const d = step(drive([OUT, 0, null], [OUT, 0, null, { driverIdentifier: ' card-5 ' }], [OUT, 0, null, { driverIdentifier: 'NOBODY' }]), { drivers });
    expect(d.drivers.changes.map((c) => [c.reason, c.from, c.to])).toEqual([['identified', 3, 5], ['unknownIdentifier', 5, null]]);
    expect(d.drivers.driverByFix.get(DEVICE)).toEqual([3, 5, null]);
    expect(d.drivers.unknown).toEqual([{ deviceId: DEVICE, identifier: 'NOBODY', at: T0 + 20_000 }]);
    expect(d.drivers.events.get(d.drivers.changes[0]!)).toMatchObject({
      type: 'driver.changed', occurredAt: at(10),
      data: { driver: { id: 5, name: 'Ben' }, previousDriver: { id: 3, name: 'Ana' }, source: 'telemetry', reason: 'identified', reportedIdentifier: 'CARD-5' },
    });
    // The snapshot is read, not written: the next step starts from what the database says.
    expect(drivers.vehicles.get(DEVICE)!.driverId).toBe(3);
  });

  it('says which devices have more to read, and leaves a device without new fixes alone', () => {
    const d = evaluateEngineStep(
      { states: [state(), state({ deviceId: 8 })], fixes: new Map([[DEVICE, drive([OUT, 0, null], [OUT, 0, null])]]), travels: [], drivers: EMPTY_DRIVER_SNAPSHOT, geofences },
      { ...SETTINGS, fixesPerDevice: 2 },
    );
    expect(d.unfinished).toEqual([DEVICE]);
    expect(d.states.map((s) => s.deviceId)).toEqual([DEVICE]);
  });
});

import { classifyDeviceStatus, type DeviceStatusThresholds } from '../device-status.ts';
import { assignDrivers, type DriverDecisions, type DriverSnapshot } from '../drivers/driver-step.ts';
import {
  alarmEvent, fixPosition, ignitionEvent, overspeedEvent, statusChangedEvent, type NewEvent,
} from '../events/event-payloads.ts';
import { evaluateFixes, type DwellRules } from '../geofences/fence-crossings.ts';
import type { GeofenceIndex } from '../geofences/geofence-index.ts';
import { visitChanges, type DeviceCrossing, type VisitChanges } from '../geofences/geofence-visits.ts';
import { travelArrivals, travelStarts, type StepTravel, type TravelStart, type WaypointArrival } from '../travels/travel-step.ts';
import { accumulate, accumulatorState, type AccumulatorFix } from '../accumulators/vehicle-accumulators.ts';
import { deviceTrips, type DeviceStop, type DeviceTrip, type TripSettings } from '../trips/device-trips.ts';
import { detectVehicleSignals, type VehicleSignal } from '../vehicle-signals.ts';
import { DEFAULT_DRIVING_SETTINGS, evaluateDriving, type DrivingSettings } from '../driving/driving-behaviour.ts';
import { DEFAULT_FUEL_THRESHOLDS, evaluateFuel, type FuelThresholds } from '../fuel/device-fuel.ts';
import type { EngineFix, EngineState, EngineStateUpdate } from './engine-state.ts';

/** The geofences a device is evaluated against: its account's of its mode, and the dwell times. */
export interface GeofenceSource {
  index(accountId: number, mode: 'live' | 'test'): GeofenceIndex | undefined;
  readonly dwellRules: DwellRules;
}

/** Everything one engine step reads, for a batch of devices. */
export interface EngineStepInput {
  /** The locked engine states, in device order. */
  states: readonly EngineState[];
  /** Each device's fixes after its cursor, oldest first (devices without any are absent). */
  fixes: ReadonlyMap<number, readonly EngineFix[]>;
  geofences: GeofenceSource;
  /** The active travels of the devices with fixes: In progress, or Scheduled and due. */
  travels: readonly StepTravel[];
  drivers: DriverSnapshot;
}

export interface EngineStepSettings {
  status: DeviceStatusThresholds;
  /** Fixes read per device: a device that had this many has more to read at once. */
  fixesPerDevice: number;
  /** A speeding stretch ends below the speed limit minus this. */
  overspeedHysteresisKmh: number;
  trips: TripSettings;
  /** Harsh driving and idling (default DEFAULT_DRIVING_SETTINGS). */
  driving?: DrivingSettings;
  /** Fuel refills and drops (default DEFAULT_FUEL_THRESHOLDS). */
  fuel?: FuelThresholds;
  /** The step's clock: a fix is classified as a fresh report. */
  now: Date;
}

/** Every decision of one step, for the write phase to store. */
export interface EngineDecisions {
  /** Devices that still have fixes after the new cursor. */
  unfinished: number[];
  states: EngineStateUpdate[];
  /** Crossings to store; their events are built from the rows stored (a replayed crossing logs nothing). */
  crossings: DeviceCrossing[];
  visits: VisitChanges;
  travelStarts: TravelStart[];
  arrivals: WaypointArrival[];
  completions: Array<{ travelId: number; at: Date }>;
  /** Travels whose waypoints changed: their ETAs are worth refreshing now. */
  progressedTravels: number[];
  trips: DeviceTrip[];
  stops: DeviceStop[];
  drivers: DriverDecisions;
  /** Travel starts, then each device's travel arrivals and signals (ignition, overspeed, alarms), in device order. */
  events: NewEvent[];
  /** Status changes, logged after the crossings. */
  statusEvents: NewEvent[];
}

/**
 * One engine step as a pure function of what it read: geofence crossings and visits, travel starts and
 * arrivals, ignition, speeding and alarms, each fix's status, trips and stops, drivers, the events of
 * all that, and each device's next state. The same input decides the same, so a job replayed from the
 * same cursors changes nothing.
 */
export function evaluateEngineStep(input: EngineStepInput, settings: EngineStepSettings): EngineDecisions {
  const started = travelStarts(input.travels);
  // A vehicle has at most one active travel (the database's rule).
  const travels = new Map(input.travels.map((t) => [t.deviceId, t]));
  const drivers = assignDrivers(input.drivers, input.fixes);
  const out: EngineDecisions = {
    unfinished: [], states: [], crossings: [], visits: { close: [], open: [] }, travelStarts: started.starts, arrivals: [], completions: [],
    progressedTravels: [], trips: [], stops: [], drivers, events: started.events, statusEvents: [],
  };
  for (const state of input.states) {
    const fixes = input.fixes.get(state.deviceId);
    if (!fixes) continue;
    if (fixes.length >= settings.fixesPerDevice) out.unfinished.push(state.deviceId);
    evaluateDevice(state, fixes, travels.get(state.deviceId), input.geofences, drivers.driverByFix.get(state.deviceId), settings, out);
  }
  out.visits = visitChanges(out.crossings);
  return out;
}

const signals: VehicleSignal[] = [];

/** One device's fixes, in fix-time order, through every rule; its decisions are appended to `out`. */
function evaluateDevice(
  state: EngineState,
  fixes: readonly EngineFix[],
  travel: StepTravel | undefined,
  geofences: GeofenceSource,
  driverByFix: readonly (number | null)[] | undefined,
  settings: EngineStepSettings,
  out: EngineDecisions,
): void {
  const deviceId = state.deviceId;
  const index = geofences.index(state.accountId, state.mode);
  const fence = evaluateFixes(
    index,
    geofences.dwellRules,
    { cursor: state.cursor?.getTime() ?? null, inside: Int32Array.from(state.inside), pending: state.pending },
    fixes.map((f) => ({ fixTime: f.fixTime.getTime(), valid: f.valid, latitude: f.latitude, longitude: f.longitude })),
  );
  for (const c of fence.crossings) {
    out.crossings.push({ deviceId, geofenceId: c.geofenceId, type: c.type, fixTime: new Date(c.fixTime), latitude: c.latitude, longitude: c.longitude });
  }

  if (travel) {
    const progress = travelArrivals(travel, fence.crossings, fixes);
    out.arrivals.push(...progress.arrivals);
    if (progress.completedAt) out.completions.push({ travelId: travel.id, at: progress.completedAt });
    out.events.push(...progress.events);
    if (progress.arrivals.length > 0) out.progressedTravels.push(travel.id);
  }

  signals.length = 0;
  const signalState = detectVehicleSignals(state, { speedLimitKmh: state.speedLimitKmh, hysteresisKmh: settings.overspeedHysteresisKmh }, fixes, signals);
  for (const s of signals) {
    const f = fixes[s.fix]!;
    if (s.kind === 'overspeed') out.events.push(overspeedEvent(deviceId, fixPosition(f), state.speedLimitKmh));
    else if (s.kind === 'alarm') out.events.push(alarmEvent(deviceId, f.alarm!, f.fixTime, fixPosition(f)));
    else out.events.push(ignitionEvent(s.kind, deviceId, fixPosition(f)));
  }

  // Each fix's status in order, so the event stream sees every transition, not only the last;
  // Inactive comes only from the sweep (silence has no fix).
  let status = state.status;
  for (const f of fixes) {
    const next = classifyDeviceStatus({ lastReportAt: settings.now, speedKmh: f.speedKmh, ignition: f.ignition }, settings.now, settings.status);
    if (next !== status) out.statusEvents.push(statusChangedEvent({ deviceId, from: status, to: next, at: f.fixTime, position: fixPosition(f) }));
    status = next;
  }

  // In fix-time order only, like the trips: a late fix adds neither distance nor engine time (docs/engine.md).
  const odometerAt = new Float64Array(fixes.length);
  const accumulators = accumulate(accumulatorState(state.accumulators ?? null), settings.trips, accumulatorFixes(fixes), odometerAt);

  // In fix-time order only, like the trips: a late fix logs no harsh or idle event (docs/engine.md).
  const driving = evaluateDriving(deviceId, state.driving, settings.driving ?? DEFAULT_DRIVING_SETTINGS, settings.trips, fixes, out.events);

  // In fix-time order only: a late fix logs no refill or drop (docs/engine.md, "Fuel").
  const fuel = evaluateFuel(deviceId, state.fuel, state.fuelTankLitres, settings.fuel ?? DEFAULT_FUEL_THRESHOLDS, settings.trips, fixes, out.events);

  // In fix-time order only: a late fix does not reopen or reshape a trip (README, "Trips and stops").
  const segmented = deviceTrips(deviceId, state.segment, fixes, { ...settings.trips, speedLimitKmh: state.speedLimitKmh }, index, driverByFix, odometerAt, driving.harshAt);
  out.trips.push(...segmented.trips);
  out.stops.push(...segmented.stops);

  out.states.push({
    deviceId,
    segment: segmented.state as unknown as Record<string, unknown>,
    accumulators: accumulators as unknown as Record<string, unknown>,
    driving: driving.state as unknown as Record<string, unknown>,
    fuel,
    cursor: fence.state.cursor === null ? null : new Date(fence.state.cursor),
    inside: [...fence.state.inside],
    pending: fence.state.pending,
    status,
    ignition: signalState.ignition,
    overspeed: signalState.overspeed,
  });
}

const accumulatorFixes = (fixes: readonly EngineFix[]): AccumulatorFix[] =>
  fixes.map((f) => ({ t: f.fixTime.getTime(), valid: f.valid, lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, ignition: f.ignition }));

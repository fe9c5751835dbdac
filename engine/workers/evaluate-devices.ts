import type { Db } from '../../db/database.ts';
import { insertCrossingEvents, recordVisits, statusChangeEvents, type DeviceCrossing, type StatusChange } from '../../db/engine-results.ts';
import { appendEvents, type NewEvent } from '../../db/event-log.ts';
import { fixesAfterCursors, lockEngineStates, saveEngineStates, type EngineStateUpdate, type NewFix } from '../../db/engine-states.ts';
import { recordArrivals, startDueTravels, travelsInProgress } from '../../db/travel-progress.ts';
import { fixPosition, vehicleSignalEvents } from '../../db/vehicle-events.ts';
import { classifyDeviceStatus, type DeviceStatusThresholds } from '../../domain/device-status.ts';
import { evaluateFixes, type Crossing } from '../../domain/geofences/fence-crossings.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import { arrivalsFromCrossings } from '../../domain/travels/travel-progress.ts';
import { detectVehicleSignals, type VehicleSignal } from '../../domain/vehicle-signals.ts';
import type { DeviceLateFixes } from '../late-fix-log.ts';
import { evaluateLateFixes } from './evaluate-late-fixes.ts';
import { saveTripRecords, type DeviceStop, type DeviceTrip } from '../../db/trip-records.ts';
import { DEFAULT_TRIP_SETTINGS, deviceTrips, type TripSettings } from '../trips/device-trips.ts';
import { evaluateDrivers } from '../drivers/device-drivers.ts';

export interface EvaluationSettings {
  status: DeviceStatusThresholds;
  /** Fixes read per device per transaction; a device with more is evaluated again at once. */
  fixesPerDevice: number;
  /** Late fixes at most this far behind a device's cursor are evaluated; older ones are only counted. */
  lateWindowMs: number;
  /** A speeding stretch ends below the speed limit minus this (default 5 km/h). */
  overspeedHysteresisKmh?: number;
  /** Trip and stop segmentation (default DEFAULT_TRIP_SETTINGS, moving speed from `status`). */
  trips?: Partial<TripSettings>;
}

export interface EvaluationOutcome {
  /** Devices that still have fixes after this run's cursor. */
  unfinished: number[];
  /** Events logged. */
  events: number;
  /** Travels whose waypoints changed: their ETAs are worth refreshing now. */
  progressedTravels: number[];
  late: { evaluated: number; ignored: number };
  /** The late-fix counts per device that had any. */
  lateByDevice: DeviceLateFixes[];
}

/**
 * One engine step for a set of devices, in one transaction: lock their engine states, read the fixes
 * after each cursor in fix-time order, evaluate them, and commit events, visits, travel progress,
 * status changes and the new cursors together. A job run twice finds nothing after the cursor; two
 * workers given the same device take turns on its lock. So delivery may be at-least-once and in any
 * order without duplicating or losing an event.
 */
export async function evaluateDevices(db: Db, catalog: GeofenceCatalog, deviceIds: number[], settings: EvaluationSettings): Promise<EvaluationOutcome> {
  return db.transaction().execute(async (trx) => {
    const states = await lockEngineStates(trx, deviceIds);
    if (states.length === 0) return { unfinished: [], events: 0, progressedTravels: [], late: { evaluated: 0, ignored: 0 }, lateByDevice: [] };
    const ids = states.map((s) => s.deviceId);
    const fixes = await fixesAfterCursors(trx, ids, settings.fixesPerDevice);
    const byDevice = new Map<number, NewFix[]>();
    for (const f of fixes) {
      const list = byDevice.get(f.deviceId);
      if (list) list.push(f);
      else byDevice.set(f.deviceId, [f]);
    }

    // A travel whose start time has come is started before its vehicle's fixes are evaluated, so a
    // waypoint reached right after the start counts even if the start job has not run yet.
    const events: NewEvent[] = (await startDueTravels(trx, { deviceIds: [...byDevice.keys()] })).events;
    const travels = new Map((await travelsInProgress(trx, [...byDevice.keys()])).map((t) => [t.deviceId, t]));

    const crossings: DeviceCrossing[] = [];
    const updates: EngineStateUpdate[] = [];
    const statusChanges: StatusChange[] = [];
    const progressedTravels: number[] = [];
    const unfinished: number[] = [];
    const signals: VehicleSignal[] = [];
    const hysteresisKmh = settings.overspeedHysteresisKmh ?? 5;
    const tripSettings: TripSettings = { ...DEFAULT_TRIP_SETTINGS, movingSpeedKmh: settings.status.movingSpeedKmh, ...settings.trips };
    // Drivers first (engine/drivers): who drives each fix, from the keys the fixes carry, in fix order.
    const drivers = await evaluateDrivers(trx, byDevice);
    // driverByFix: read by the trip segmenter.
    const driverByFix = drivers.driverByFix;
    const tripRows: DeviceTrip[] = [];
    const stopRows: DeviceStop[] = [];
    const now = new Date();
    for (const state of states) {
      const deviceFixes = byDevice.get(state.deviceId);
      if (!deviceFixes) continue;
      if (deviceFixes.length >= settings.fixesPerDevice) unfinished.push(state.deviceId);
      const result = evaluateFixes(
        catalog.index(state.accountId, state.mode),
        catalog.dwellRules,
        { cursor: state.cursor?.getTime() ?? null, inside: Int32Array.from(state.inside), pending: state.pending },
        deviceFixes.map((f) => ({ fixTime: f.fixTime.getTime(), valid: f.valid, latitude: f.latitude, longitude: f.longitude })),
      );
      for (const c of result.crossings) crossings.push(deviceCrossing(state.deviceId, c));

      const travel = travels.get(state.deviceId);
      if (travel && result.crossings.length > 0) {
        const { arrivals, completed } = arrivalsFromCrossings(travel.waypoints, travel.startedAt.getTime(), result.crossings);
        const arrived = await recordArrivals(trx, travel, arrivals.map((a) => ({ seq: a.seq, arrivedAt: new Date(a.arrivedAt) })), completed, (at) => {
          const c = result.crossings.find((x) => x.fixTime === at.getTime() && x.type === 'enter');
          const f = deviceFixes.find((x) => x.fixTime.getTime() === at.getTime());
          // A dwell time may date the arrival to a fix of an earlier batch: its place is the crossing's.
          return f ? fixPosition(f) : c ? { lat: c.latitude, lng: c.longitude, speedKmh: null, heading: null, fixTime: at } : null;
        });
        events.push(...arrived);
        if (arrivals.length > 0) progressedTravels.push(travel.id);
      }

      signals.length = 0;
      const signalState = detectVehicleSignals(state, { speedLimitKmh: state.speedLimitKmh, hysteresisKmh }, deviceFixes, signals);
      if (signals.length > 0) vehicleSignalEvents(state.deviceId, deviceFixes, signals, state.speedLimitKmh, events);

      // Each fix's status in order, so the event stream sees every transition, not only the last;
      // Inactive comes only from the sweep (silence has no fix).
      let status = state.status;
      for (const f of deviceFixes) {
        const next = classifyDeviceStatus({ lastReportAt: now, speedKmh: f.speedKmh, ignition: f.ignition }, now, settings.status);
        if (next !== status) {
          statusChanges.push({
            deviceId: state.deviceId, from: status, to: next, at: f.fixTime,
            position: { lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading, fixTime: f.fixTime },
          });
        }
        status = next;
      }

      // In fix-time order only: a late fix does not reopen or reshape a trip (README, "Trips and stops").
      const segmented = deviceTrips(
        state.deviceId, state.segment, deviceFixes, { ...tripSettings, speedLimitKmh: state.speedLimitKmh },
        catalog.index(state.accountId, state.mode), driverByFix.get(state.deviceId),
      );
      tripRows.push(...segmented.trips);
      stopRows.push(...segmented.stops);

      updates.push({
        deviceId: state.deviceId,
        segment: segmented.state as unknown as Record<string, unknown>,
        cursor: result.state.cursor === null ? null : new Date(result.state.cursor),
        inside: [...result.state.inside],
        pending: result.state.pending,
        status,
        ignition: signalState.ignition,
        overspeed: signalState.overspeed,
      });
    }
    events.push(...(await insertCrossingEvents(trx, crossings)));
    await recordVisits(trx, crossings);
    events.push(...statusChangeEvents(statusChanges));
    events.push(...(await drivers.save()));
    await saveTripRecords(trx, tripRows, stopRows);
    await saveEngineStates(trx, updates);
    // After the fixes in order, so the late ones are read against a timeline that includes them.
    const cursorAfter = new Map(updates.map((u) => [u.deviceId, u.cursor]));
    const late = await evaluateLateFixes(
      trx,
      catalog,
      states
        .filter((s) => s.hasLateFixes)
        .map((s) => ({
          deviceId: s.deviceId, accountId: s.accountId, mode: s.mode, cursorBefore: s.cursor,
          cursorAfter: cursorAfter.has(s.deviceId) ? cursorAfter.get(s.deviceId)! : s.cursor,
          readInOrder: new Set((byDevice.get(s.deviceId) ?? []).map((f) => f.fixTime.getTime())),
        })),
      settings.lateWindowMs,
    );
    events.push(...late.events);
    // Last: appending holds the log's lock until the commit (see appendEvents).
    const logged = await appendEvents(trx, events.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime()));
    return { unfinished, events: logged.length, progressedTravels, late: { evaluated: late.evaluated, ignored: late.ignored }, lateByDevice: late.devices };
  });
}

function deviceCrossing(deviceId: number, c: Crossing): DeviceCrossing {
  return { deviceId, geofenceId: c.geofenceId, type: c.type, fixTime: new Date(c.fixTime), latitude: c.latitude, longitude: c.longitude };
}

import type { Db } from '../../db/database.ts';
import { saveEngineResults } from '../../db/engine-results.ts';
import { readEngineStep } from '../../db/engine-states.ts';
import { appendEvents } from '../../db/event-log.ts';
import type { DeviceStatusThresholds } from '../../domain/device-status.ts';
import { evaluateEngineStep } from '../../domain/engine-step/evaluate-engine-step.ts';
import { geofenceCrossingEvent, type NewEvent } from '../../domain/events/event-payloads.ts';
import { withKnownAddresses, type KnownAddress } from '../../domain/geocoding/address-reuse.ts';
import { DEFAULT_TRIP_SETTINGS, type TripSettings } from '../../domain/trips/device-trips.ts';
import type { DrivingSettings } from '../../domain/driving/driving-behaviour.ts';
import type { FuelThresholds } from '../../domain/fuel/device-fuel.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import type { DeviceLateFixes } from '../late-fix-log.ts';
import { evaluateLateFixes } from './evaluate-late-fixes.ts';
import type { CommittedFixes } from '../committed-fixes.ts';

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
  /** Harsh driving and idling (default DEFAULT_DRIVING_SETTINGS). */
  driving?: DrivingSettings;
  /** Fuel refills and drops (default DEFAULT_FUEL_THRESHOLDS). */
  fuel?: FuelThresholds;
  /** An event's position carries the device's known address within this many metres of it (GEOCODER_REUSE_DISTANCE_M; default 100). */
  addressReuseM?: number;
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
 * One engine step for a set of devices, in one transaction: read (lock their engine states, the fixes
 * after each cursor in fix-time order, their travels and drivers), evaluate (one pure function that
 * decides everything), write the decisions, then the late fixes the same way, and log the events last.
 * Events, visits, travel progress, status changes and the new cursors commit together. A job run twice
 * finds nothing after the cursor; two workers given the same device take turns on its lock. So
 * delivery may be at-least-once and in any order without duplicating or losing an event.
 */
export async function evaluateDevices(
  db: Db,
  catalog: GeofenceCatalog,
  deviceIds: number[],
  settings: EvaluationSettings,
  /** This process's recently committed fixes, read instead of the database when complete (see readEngineStep). */
  committed?: CommittedFixes,
): Promise<EvaluationOutcome> {
  let cursors: Array<{ deviceId: number; cursor: Date | null }> = [];
  const outcome = await db.transaction().execute(async (trx) => {
    const read = await readEngineStep(trx, deviceIds, settings.fixesPerDevice, committed);
    if (!read) return { unfinished: [], events: 0, progressedTravels: [], late: { evaluated: 0, ignored: 0 }, lateByDevice: [] };
    const decisions = evaluateEngineStep({ ...read, geofences: catalog }, {
      status: settings.status,
      fixesPerDevice: settings.fixesPerDevice,
      overspeedHysteresisKmh: settings.overspeedHysteresisKmh ?? 5,
      trips: { ...DEFAULT_TRIP_SETTINGS, movingSpeedKmh: settings.status.movingSpeedKmh, ...settings.trips },
      ...(settings.driving ? { driving: settings.driving } : {}),
      ...(settings.fuel ? { fuel: settings.fuel } : {}),
      now: new Date(),
    });
    const written = await saveEngineResults(trx, decisions);
    cursors = decisions.states;

    // After the fixes in order, so the late ones are read against a timeline that includes them.
    const cursorAfter = new Map(decisions.states.map((u) => [u.deviceId, u.cursor]));
    const late = await evaluateLateFixes(
      trx,
      catalog,
      read.states
        .filter((s) => s.hasLateFixes)
        .map((s) => ({
          deviceId: s.deviceId, accountId: s.accountId, mode: s.mode, cursorBefore: s.cursor,
          cursorAfter: cursorAfter.has(s.deviceId) ? cursorAfter.get(s.deviceId)! : s.cursor,
          readInOrder: new Set((read.fixes.get(s.deviceId) ?? []).map((f) => f.fixTime.getTime())),
        })),
      settings.lateWindowMs,
    );

    // Positions carry the address known now, read with the locked states: no lookup in the transaction.
    const known = new Map<number, KnownAddress>();
    for (const s of read.states) if (s.knownAddress) known.set(s.deviceId, s.knownAddress);
    // Last: appending holds the log's lock until the commit (see appendEvents).
    const logged = await appendEvents(trx, withKnownAddresses(inLogOrder([
      decisions.events,
      written.crossings.map(geofenceCrossingEvent),
      decisions.statusEvents,
      written.driverChanges.map((c) => decisions.drivers.events.get(c)!),
      late.events,
    ]), known, settings.addressReuseM ?? 100));
    return {
      unfinished: decisions.unfinished, events: logged.length, progressedTravels: decisions.progressedTravels,
      late: { evaluated: late.evaluated, ignored: late.ignored }, lateByDevice: late.devices,
    };
  });
  // Only once committed: a step rolled back leaves its fixes to be evaluated again.
  committed?.evaluated(cursors);
  return outcome;
}

/** By time; events of the same instant in the order of their groups, then as each group lists them. */
function inLogOrder(groups: NewEvent[][]): NewEvent[] {
  return groups.flat().sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
}

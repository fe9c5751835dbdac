import type { EngineFix } from '../engine-step/engine-state.ts';
import { driverChangedEvent, fixPosition, type DriverRef, type NewEvent } from '../events/event-payloads.ts';
import { DriverLedger, normalizeDriverIdentifier, type DriverChange, type DriverState, type VehicleDriverState } from './driver-assignment.ts';

/** Where the step's vehicles and the drivers their keys name stand, as read with the vehicles locked. */
export interface DriverSnapshot {
  /** Each vehicle's current driver and newest boundary (vehicles that never had one are absent). */
  vehicles: ReadonlyMap<number, VehicleDriverState>;
  /** The drivers the keys name, with where they stand. */
  drivers: ReadonlyMap<number, DriverState>;
  /** `keyOf(vehicle, identifier)` → the driver that key names for that vehicle. */
  byKey: ReadonlyMap<string, number>;
  /** Names of the drivers above and of the vehicles' current drivers, for the events. */
  refs: ReadonlyMap<number, DriverRef>;
}

export const EMPTY_DRIVER_SNAPSHOT: DriverSnapshot = { vehicles: new Map(), drivers: new Map(), byKey: new Map(), refs: new Map() };

export const keyOf = (vehicleId: number, identifier: string) => `${vehicleId}:${identifier}`;

/** The keys the fixes carry, normalised, once per vehicle: what the read looks up. */
export function driverKeys(fixes: ReadonlyMap<number, readonly EngineFix[]>): Array<{ deviceId: number; identifier: string }> {
  const keys = new Map<string, { deviceId: number; identifier: string }>();
  for (const id of [...fixes.keys()].sort((a, b) => a - b)) {
    for (const f of fixes.get(id)!) {
      const identifier = normalizeDriverIdentifier(f.driverIdentifier);
      if (identifier !== null) keys.set(keyOf(id, identifier), { deviceId: id, identifier });
    }
  }
  return [...keys.values()];
}

export interface DriverDecisions {
  /** Per vehicle, the driver in effect at each of its new fixes (null: none). */
  driverByFix: Map<number, (number | null)[]>;
  /** In vehicle order, then fix order. */
  changes: DriverChange[];
  /** Each change's `driver.changed`, logged if writing the change changed something. */
  events: Map<DriverChange, NewEvent>;
  /** The newest key of each vehicle that named no driver. */
  unknown: Array<{ deviceId: number; identifier: string; at: number }>;
}

/**
 * One step's driver assignment: who drives each new fix of each vehicle, decided in vehicle order and
 * fix-time order from the keys the fixes carry (driver-assignment.ts), over a copy of the snapshot.
 */
export function assignDrivers(snapshot: DriverSnapshot, fixes: ReadonlyMap<number, readonly EngineFix[]>): DriverDecisions {
  const vehicles = new Map([...snapshot.vehicles].map(([id, v]) => [id, { ...v }]));
  const drivers = new Map([...snapshot.drivers].map(([id, d]) => [id, { ...d }]));
  const ledger = new DriverLedger(vehicles, drivers, (vehicleId, identifier) => snapshot.byKey.get(keyOf(vehicleId, identifier)));
  const out: DriverDecisions = { driverByFix: new Map(), changes: [], events: new Map(), unknown: [] };
  const ref = (driverId: number | null) => (driverId === null ? null : (snapshot.refs.get(driverId) ?? null));
  for (const id of [...fixes.keys()].sort((a, b) => a - b)) {
    const deviceFixes = fixes.get(id)!;
    const result = ledger.run(id, deviceFixes.map((f) => ({ fixTime: f.fixTime.getTime(), driverIdentifier: f.driverIdentifier })));
    out.driverByFix.set(id, result.driverByFix);
    if (result.unknown) out.unknown.push({ deviceId: id, ...result.unknown });
    for (const c of result.changes) {
      out.changes.push(c);
      // The driver left this vehicle for another: the fix that showed it is the other vehicle's.
      const fix = c.reason === 'otherVehicle' ? undefined : fixes.get(c.vehicleId)?.[c.fix];
      out.events.set(c, driverChangedEvent({
        vehicleId: c.vehicleId, at: new Date(c.at), driver: ref(c.to), previousDriver: ref(c.from), source: 'telemetry', reason: c.reason,
        reportedIdentifier: c.identifier, position: fix ? fixPosition(fix) : null,
      }));
    }
  }
  return out;
}

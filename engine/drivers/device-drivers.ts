import type { Db } from '../../db/database.ts';
import {
  driverChangedEvent, driverRefs, driversForKeys, keyOf, recordUnknownIdentifiers, saveDriverChanges, vehicleDriverStates,
} from '../../db/driver-assignments.ts';
import type { NewFix } from '../../db/engine-states.ts';
import type { NewEvent } from '../../db/event-log.ts';
import { fixPosition } from '../../db/vehicle-events.ts';
import { DriverLedger, normalizeDriverIdentifier, type DriverChange } from '../../domain/drivers/driver-assignment.ts';

export interface DriverStep {
  /** Per vehicle, the driver in effect at each of its new fixes (null: none). */
  driverByFix: Map<number, (number | null)[]>;
  /** Writes the assignments and the unknown keys in the caller's transaction; the `driver.changed` events to log. */
  save(): Promise<NewEvent[]>;
}

/**
 * One engine step's driver assignment: who drives each new fix of each vehicle, decided in fix-time
 * order from the keys the fixes carry (engine/drivers/driver-assignment.ts). Two queries to read where
 * the vehicles and the named drivers stand; writes only when something changed. Called with the
 * vehicles' engine states locked, so nothing else assigns from telemetry meanwhile.
 */
export async function evaluateDrivers(trx: Db, byDevice: ReadonlyMap<number, readonly NewFix[]>): Promise<DriverStep> {
  const ids = [...byDevice.keys()].sort((a, b) => a - b);
  const keys = new Map<string, { deviceId: number; identifier: string }>();
  for (const id of ids) {
    for (const f of byDevice.get(id)!) {
      const identifier = normalizeDriverIdentifier(f.driverIdentifier);
      if (identifier !== null) keys.set(keyOf(id, identifier), { deviceId: id, identifier });
    }
  }
  const vehicles = await vehicleDriverStates(trx, ids);
  const lookup = await driversForKeys(trx, [...keys.values()]);
  const ledger = new DriverLedger(vehicles, lookup.drivers, (vehicleId, identifier) => lookup.byKey.get(keyOf(vehicleId, identifier)));

  const driverByFix = new Map<number, (number | null)[]>();
  const changes: DriverChange[] = [];
  const unknown: Array<{ deviceId: number; identifier: string; at: number }> = [];
  for (const id of ids) {
    const fixes = byDevice.get(id)!;
    const result = ledger.run(id, fixes.map((f) => ({ fixTime: f.fixTime.getTime(), driverIdentifier: f.driverIdentifier })));
    driverByFix.set(id, result.driverByFix);
    changes.push(...result.changes);
    if (result.unknown) unknown.push({ deviceId: id, ...result.unknown });
  }

  return {
    driverByFix,
    async save() {
      await recordUnknownIdentifiers(trx, unknown);
      if (changes.length === 0) return [];
      const applied = await saveDriverChanges(trx, changes);
      const refs = await driverRefs(trx, applied.flatMap((c) => [c.from, c.to]).filter((d): d is number => d !== null));
      const ref = (driverId: number | null) => (driverId === null ? null : (refs.get(driverId) ?? null));
      return applied.map((c) => {
        // The driver left this vehicle for another: the fix that showed it is the other vehicle's.
        const fix = c.reason === 'otherVehicle' ? undefined : byDevice.get(c.vehicleId)?.[c.fix];
        return driverChangedEvent({
          vehicleId: c.vehicleId, at: new Date(c.at), driver: ref(c.to), previousDriver: ref(c.from), source: 'telemetry', reason: c.reason,
          reportedIdentifier: c.identifier, position: fix ? fixPosition(fix) : null,
        });
      });
    },
  };
}

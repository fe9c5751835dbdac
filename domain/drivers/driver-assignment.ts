/**
 * Who drives a vehicle, decided from the driver keys (iButton, RFID card, licence) its trackers read,
 * fix by fix in fix-time order. Pure: the caller loads the ledger's state, runs each device's new
 * fixes through it, and writes the changes it returns.
 *
 * The rules (README, "Drivers"):
 * - A fix without a key changes nothing (trackers that send the key only when it is swiped, and
 *   Teltonika's IO 78 of 0 for "no key", both read as "no news").
 * - A key of a registered driver assigns that driver from that fix on; the same driver again changes
 *   nothing. If the driver was assigned to another vehicle, that assignment ends at the same instant.
 * - A key that matches no driver is recorded on the vehicle (so it can be registered later) and ends
 *   the current assignment: someone else is driving, and their trips must not count against the driver
 *   who drove before. A repeat of it while no driver is assigned changes nothing.
 * - Only fixes after the vehicle's last assignment boundary (the start or end of its newest assignment),
 *   and after the driver's, can change anything: an assignment is never rewritten by older data (a
 *   replayed batch, a buffered fix older than a manual assignment).
 */

/** What the ledger knows of a vehicle: its driver now (null: none) and its newest assignment boundary. */
export interface VehicleDriverState {
  driverId: number | null;
  /** Epoch ms of the start or end of its newest assignment; null if it never had one. */
  boundary: number | null;
}

/** What the ledger knows of a driver: the vehicle assigned now (null: none) and the newest boundary. */
export interface DriverState {
  id: number;
  vehicleId: number | null;
  boundary: number | null;
}

export interface KeyedFix {
  /** Epoch ms. */
  fixTime: number;
  /** The key as the decoder wrote it (`driverUniqueId`, else `driverLicense`), or null. */
  driverIdentifier: string | null;
}

export type DriverChangeReason = 'identified' | 'unknownIdentifier' | 'otherVehicle';

export interface DriverChange {
  vehicleId: number;
  /** The fix of `vehicleId` that caused it (for `otherVehicle`, the fix of the vehicle the driver went to). */
  fix: number;
  at: number;
  from: number | null;
  to: number | null;
  reason: DriverChangeReason;
  /** The key read, normalised. */
  identifier: string;
  /** For `identified`: the vehicle whose assignment of the driver ends here, if any. */
  tookFrom: number | null;
}

export interface VehicleDrivers {
  /** The driver in effect at each fix (after the change a fix made). */
  driverByFix: (number | null)[];
  /** In fix order; `otherVehicle` changes concern the vehicle a driver left. */
  changes: DriverChange[];
  /** The newest key that matched no driver, with the time of its fix. */
  unknown: { identifier: string; at: number } | null;
}

const MAX_IDENTIFIER = 64;
// Control characters (NUL included) cannot be typed in the API, so a key holding one could never match.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The form identifiers are stored and compared in: trimmed and upper case, so a hex key reads the same
 * whether a decoder or a person wrote it. Null for a key no driver could have (empty, over 64
 * characters, control characters).
 */
export function normalizeDriverIdentifier(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const identifier = raw.trim().toUpperCase();
  if (identifier.length === 0 || identifier.length > MAX_IDENTIFIER || CONTROL.test(identifier)) return null;
  return identifier;
}

/**
 * The assignment state of the vehicles and drivers one engine step touches. Vehicles are run through it
 * one at a time; a driver who moves between two of them within the step is seen moving.
 */
export class DriverLedger {
  constructor(
    private readonly vehicles: Map<number, VehicleDriverState>,
    private readonly drivers: Map<number, DriverState>,
    /** The driver a key names for a vehicle (keys belong to the vehicle's account and mode). */
    private readonly driverFor: (vehicleId: number, identifier: string) => number | undefined,
  ) {}

  vehicle(vehicleId: number): VehicleDriverState {
    let state = this.vehicles.get(vehicleId);
    if (!state) this.vehicles.set(vehicleId, (state = { driverId: null, boundary: null }));
    return state;
  }

  /** Runs one vehicle's new fixes, oldest first, and moves the ledger on. */
  run(vehicleId: number, fixes: readonly KeyedFix[]): VehicleDrivers {
    const vehicle = this.vehicle(vehicleId);
    const driverByFix: (number | null)[] = new Array(fixes.length);
    const changes: DriverChange[] = [];
    let unknown: VehicleDrivers['unknown'] = null;
    for (let i = 0; i < fixes.length; i++) {
      const f = fixes[i]!;
      const identifier = normalizeDriverIdentifier(f.driverIdentifier);
      if (identifier !== null) {
        const driverId = this.driverFor(vehicleId, identifier);
        if (driverId === undefined) unknown = { identifier, at: f.fixTime };
        if (after(f.fixTime, vehicle.boundary)) {
          if (driverId === undefined) {
            if (vehicle.driverId !== null) changes.push(this.end(vehicleId, vehicle, i, f.fixTime, 'unknownIdentifier', identifier));
          } else if (driverId !== vehicle.driverId) {
            const driver = this.drivers.get(driverId) ?? { id: driverId, vehicleId: null, boundary: null };
            if (after(f.fixTime, driver.boundary)) changes.push(...this.assign(vehicleId, vehicle, driver, i, f.fixTime, identifier));
          }
        }
      }
      driverByFix[i] = vehicle.driverId;
    }
    return { driverByFix, changes, unknown };
  }

  private assign(vehicleId: number, vehicle: VehicleDriverState, driver: DriverState, fix: number, at: number, identifier: string): DriverChange[] {
    const out: DriverChange[] = [];
    const tookFrom = driver.vehicleId !== null && driver.vehicleId !== vehicleId ? driver.vehicleId : null;
    if (tookFrom !== null) {
      const other = this.vehicle(tookFrom);
      out.push({ vehicleId: tookFrom, fix, at, from: driver.id, to: null, reason: 'otherVehicle', identifier, tookFrom: null });
      other.driverId = null;
      other.boundary = at;
    }
    out.unshift({ vehicleId, fix, at, from: vehicle.driverId, to: driver.id, reason: 'identified', identifier, tookFrom });
    this.release(vehicle.driverId, at);
    vehicle.driverId = driver.id;
    vehicle.boundary = at;
    driver.vehicleId = vehicleId;
    driver.boundary = at;
    this.drivers.set(driver.id, driver);
    return out;
  }

  private end(vehicleId: number, vehicle: VehicleDriverState, fix: number, at: number, reason: DriverChangeReason, identifier: string): DriverChange {
    const change: DriverChange = { vehicleId, fix, at, from: vehicle.driverId, to: null, reason, identifier, tookFrom: null };
    this.release(vehicle.driverId, at);
    vehicle.driverId = null;
    vehicle.boundary = at;
    return change;
  }

  /** The driver whose assignment ends at `at` is free from then on. */
  private release(driverId: number | null, at: number): void {
    if (driverId === null) return;
    const driver = this.drivers.get(driverId);
    if (driver) {
      driver.vehicleId = null;
      driver.boundary = at;
    } else this.drivers.set(driverId, { id: driverId, vehicleId: null, boundary: at });
  }
}

const after = (t: number, boundary: number | null) => boundary === null || t > boundary;

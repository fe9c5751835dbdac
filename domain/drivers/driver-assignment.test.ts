import { describe, expect, it } from 'vitest';
import { DriverLedger, normalizeDriverIdentifier, type DriverState, type KeyedFix, type VehicleDriverState } from './driver-assignment.ts';

// Keys as the decoders write them; the registry as the database would answer for one account.
const ANA = 'A1B2C3D4E5F60708';
const BEN = 'CARD-0042';
const registry = new Map([[ANA, 1], [BEN, 2]]);

function ledger(vehicles: Array<[number, VehicleDriverState]> = [], drivers: DriverState[] = []) {
  const known = new Map(drivers.map((d) => [d.id, d]));
  for (const id of registry.values()) if (!known.has(id)) known.set(id, { id, vehicleId: null, boundary: null });
  return new DriverLedger(new Map(vehicles), known, (_vehicle, identifier) => registry.get(identifier));
}

const fixes = (...keys: Array<string | null>): KeyedFix[] => keys.map((k, i) => ({ fixTime: 1_000 * (i + 1), driverIdentifier: k }));

describe('normalizeDriverIdentifier', () => {
  it.each([
    ['a1b2c3d4e5f60708', ANA],
    ['  card-0042 ', BEN],
    ['', null],
    ['   ', null],
    ['x'.repeat(65), null],
    ['AB\u0000CD', null],
    [null, null],
  ])('%j reads as %j', (raw, expected) => expect(normalizeDriverIdentifier(raw)).toBe(expected));
});

describe('DriverLedger', () => {
  it('assigns the driver a key names from that fix on; fixes without a key and the same key again change nothing', () => {
    const result = ledger().run(10, fixes(null, ANA.toLowerCase(), null, ANA, null));
    expect(result.driverByFix).toEqual([null, 1, 1, 1, 1]);
    expect(result.changes).toEqual([{ vehicleId: 10, fix: 1, at: 2_000, from: null, to: 1, reason: 'identified', identifier: ANA, tookFrom: null }]);
    expect(result.unknown).toBeNull();
  });

  it('hands over from one driver to the next at the fix of the new key', () => {
    const result = ledger([[10, { driverId: 1, boundary: 500 }]], [{ id: 1, vehicleId: 10, boundary: 500 }]).run(10, fixes(null, BEN, BEN));
    expect(result.driverByFix).toEqual([1, 2, 2]);
    expect(result.changes.map((c) => [c.fix, c.from, c.to, c.reason])).toEqual([[1, 1, 2, 'identified']]);
  });

  it('ends the assignment at a key that names no driver and reports the key; a repeat while nobody is assigned changes nothing', () => {
    const result = ledger([[10, { driverId: 1, boundary: 500 }]]).run(10, fixes('STRANGER', null, 'STRANGER', 'other'));
    expect(result.driverByFix).toEqual([null, null, null, null]);
    expect(result.changes).toEqual([{ vehicleId: 10, fix: 0, at: 1_000, from: 1, to: null, reason: 'unknownIdentifier', identifier: 'STRANGER', tookFrom: null }]);
    expect(result.unknown).toEqual({ identifier: 'OTHER', at: 4_000 });
  });

  it('moves a driver identified on another vehicle, ending the assignment there at the same instant', () => {
    const book = ledger([[20, { driverId: 1, boundary: 500 }]], [{ id: 1, vehicleId: 20, boundary: 500 }]);
    const result = book.run(10, fixes(null, ANA));
    expect(result.changes.map((c) => [c.vehicleId, c.at, c.from, c.to, c.reason, c.tookFrom])).toEqual([
      [10, 2_000, null, 1, 'identified', 20],
      [20, 2_000, 1, null, 'otherVehicle', null],
    ]);
    // Within the same step the other vehicle now has nobody, and a later fix there without a key keeps it so.
    expect(book.run(20, [{ fixTime: 3_000, driverIdentifier: null }]).driverByFix).toEqual([null]);
    expect(book.vehicle(20)).toEqual({ driverId: null, boundary: 2_000 });
  });

  it('never rewrites what happened after a fix: keys at or before the vehicle\'s or the driver\'s newest boundary change nothing', () => {
    // A manual assignment of Ben at 2.5 s: the buffered fixes of 1 s and 2 s carry Ana's key.
    const vehicle = ledger([[10, { driverId: 2, boundary: 2_500 }]], [{ id: 2, vehicleId: 10, boundary: 2_500 }]).run(10, fixes(ANA, ANA, null, ANA));
    expect(vehicle.driverByFix).toEqual([2, 2, 2, 1]);
    expect(vehicle.changes.map((c) => [c.at, c.to])).toEqual([[4_000, 1]]);
    // Ana has been on vehicle 20 since 3 s: her key read on vehicle 10 at 2 s is older news.
    const driver = ledger([], [{ id: 1, vehicleId: 20, boundary: 3_000 }]).run(10, fixes(null, ANA));
    expect(driver.changes).toEqual([]);
    expect(driver.driverByFix).toEqual([null, null]);
  });

  it('replayed from the state it left, the same fixes decide nothing new', () => {
    const book = ledger();
    const keys = fixes(ANA, null, BEN, 'NOBODY', ANA);
    const first = book.run(10, keys);
    expect(first.changes.map((c) => [c.to, c.reason])).toEqual([[1, 'identified'], [2, 'identified'], [null, 'unknownIdentifier'], [1, 'identified']]);
    const again = book.run(10, keys);
    expect(again.changes).toEqual([]);
    expect(again.driverByFix).toEqual([1, 1, 1, 1, 1]);
  });

  it('frees the driver a key replaced, so their next key elsewhere takes nobody else\'s vehicle', () => {
    const book = ledger([[10, { driverId: 1, boundary: 500 }]], [{ id: 1, vehicleId: 10, boundary: 500 }]);
    book.run(10, fixes(BEN));
    const elsewhere = book.run(20, [{ fixTime: 5_000, driverIdentifier: ANA }]);
    expect(elsewhere.changes.map((c) => [c.vehicleId, c.from, c.to, c.tookFrom])).toEqual([[20, null, 1, null]]);
  });
});

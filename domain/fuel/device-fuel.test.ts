import { describe, expect, it } from 'vitest';
import type { EngineFix } from '../engine-step/engine-state.ts';
import { eventDataJson, type NewEvent } from '../events/event-payloads.ts';
import { DEFAULT_TRIP_SETTINGS } from '../trips/device-trips.ts';
import { DEFAULT_FUEL_THRESHOLDS, evaluateFuel } from './device-fuel.ts';

const T0 = Date.UTC(2026, 0, 5, 2, 0, 0);

/** Parked with the ignition off, a fix a minute: the level at each. */
const parked = (levels: Array<number | null>, litres = false): EngineFix[] => levels.map((level, i) => ({
  deviceId: 7, fixTime: new Date(T0 + i * 60_000), valid: true, latitude: 19.43, longitude: -99.13, speedKmh: 0, heading: 0, ignition: false,
  alarm: null, odometerKm: null, driverIdentifier: null, fuelPercent: litres ? null : level, fuelLitres: litres ? level : null,
}));

const SIPHONED = [70, 70, 70, 70, 70, 62, 55, 48, 48, 48, 48, 48, 48, 48, 48];

describe('fuel in the engine step', () => {
  it('logs vehicle.fuel.drop with its amounts, position and a dedupe key, and returns the state to store', () => {
    const events: NewEvent[] = [];
    const state = evaluateFuel(7, null, 60, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, parked(SIPHONED), events);
    expect(events).toHaveLength(1);
    const [drop] = events;
    expect(drop).toMatchObject({
      type: 'vehicle.fuel.drop', deviceId: 7,
      data: { fuel: { fromPercent: 70, toPercent: 48, amountPercent: 22, amountLitres: 13.2 } },
    });
    // Placed at the parked fix where the fall was first seen past the threshold.
    expect(drop!.occurredAt).toEqual(drop!.position!.fixTime);
    expect(drop!.dedupeKey).toBe(`fuel.drop:7:${drop!.occurredAt.getTime()}`);
    expect(JSON.parse(eventDataJson(drop!))).toMatchObject({ position: { lat: 19.43, lng: -99.13, speedKmh: 0 }, fuel: { amountPercent: 22 } });
    expect(state).toBeDefined();
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('decides the same from the stored state whatever the batches, so a replay from a cursor logs the same events', () => {
    const fixes = parked(SIPHONED);
    const whole: NewEvent[] = [];
    evaluateFuel(7, null, null, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, fixes, whole);
    const split: NewEvent[] = [];
    const first = evaluateFuel(7, null, null, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, fixes.slice(0, 6), split);
    const stored = JSON.parse(JSON.stringify(first)) as Record<string, unknown>;
    evaluateFuel(7, stored, null, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, fixes.slice(6), split);
    expect(split.map((e) => e.dedupeKey)).toEqual(whole.map((e) => e.dedupeKey));
    // The stored state is an input: evaluating from it again changes it in no way.
    expect(stored).toEqual(JSON.parse(JSON.stringify(first)));
  });

  it('leaves the stored state alone for a vehicle without fuel readings, and reads litres only with a tank', () => {
    const none: NewEvent[] = [];
    expect(evaluateFuel(7, null, 60, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, parked(SIPHONED.map(() => null)), none)).toBeUndefined();
    expect(evaluateFuel(7, null, null, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, parked(SIPHONED.map((p) => p * 0.5), true), none)).toBeUndefined();
    expect(none).toEqual([]);
    const withTank: NewEvent[] = [];
    evaluateFuel(7, null, 50, DEFAULT_FUEL_THRESHOLDS, DEFAULT_TRIP_SETTINGS, parked(SIPHONED.map((p) => p * 0.5), true), withTank);
    expect(withTank.map((e) => e.data)).toEqual([{ fuel: { fromPercent: 70, toPercent: 48, amountPercent: 22, amountLitres: 11 } }]);
  });

  it('follows FUEL_DROP_MIN_PERCENT: a 22-point fall is no drop when the threshold is 25', () => {
    const events: NewEvent[] = [];
    evaluateFuel(7, null, null, { ...DEFAULT_FUEL_THRESHOLDS, dropMinPercent: 25 }, DEFAULT_TRIP_SETTINGS, parked(SIPHONED), events);
    expect(events).toEqual([]);
  });
});

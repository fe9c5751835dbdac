import type { EngineFix } from '../engine-step/engine-state.ts';
import { fuelEvent, type NewEvent } from '../events/event-payloads.ts';
import type { TripSettings } from '../trips/device-trips.ts';
import { detectFuelChanges, fuelState, type FuelChange, type FuelFix, type FuelRules } from './fuel-events.ts';

/** The fuel settings of the engine (`FUEL_REFILL_MIN_PERCENT`, `FUEL_DROP_MIN_PERCENT`); stops as the trips have them. */
export type FuelThresholds = Pick<FuelRules, 'refillMinPercent' | 'dropMinPercent'>;

export const DEFAULT_FUEL_THRESHOLDS: FuelThresholds = { refillMinPercent: 10, dropMinPercent: 8 };

const changes: FuelChange[] = [];

/**
 * One device's fixes, in fix-time order, through the fuel detector (fuel-events.ts); its refill and
 * drop events are appended to `events`. Returns the detector's new state, or undefined to leave the
 * stored one: a vehicle that has never reported a fuel level costs one look at each fix.
 */
export function evaluateFuel(
  deviceId: number,
  stored: Record<string, unknown> | null | undefined,
  tankLitres: number | null | undefined,
  thresholds: FuelThresholds,
  trips: TripSettings,
  fixes: readonly EngineFix[],
  events: NewEvent[],
): Record<string, unknown> | undefined {
  const prior = fuelState(stored);
  if (prior === null && !fixes.some((f) => f.fuelPercent != null || f.fuelLitres != null)) return undefined;
  const rules: FuelRules = { ...thresholds, movingSpeedKmh: trips.movingSpeedKmh, minStopS: trips.minStopS, maxGapS: trips.maxGapS };
  changes.length = 0;
  const next = detectFuelChanges(prior, rules, tankLitres ?? null, fixes.map(fuelFix), changes);
  for (const c of changes) {
    events.push(fuelEvent(deviceId, c, { lat: c.at.lat, lng: c.at.lng, speedKmh: c.at.speedKmh, heading: c.at.heading, fixTime: new Date(c.at.t) }));
  }
  return next === null ? undefined : (next as unknown as Record<string, unknown>);
}

const fuelFix = (f: EngineFix): FuelFix => ({
  t: f.fixTime.getTime(), lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading, ignition: f.ignition,
  fuelPercent: f.fuelPercent ?? null, fuelLitres: f.fuelLitres ?? null,
});

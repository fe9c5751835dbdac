import type { PendingCrossing } from '../geofences/pending-crossing.ts';
import type { KnownAddress } from '../geocoding/address-reuse.ts';

/** A device's engine state as the step reads it, locked: what the evaluation remembers between batches. */
export interface EngineState {
  deviceId: number;
  accountId: number;
  /** The device's mode: it is evaluated against its account's geofences of this mode only. */
  mode: 'live' | 'test';
  cursor: Date | null;
  inside: number[];
  pending: PendingCrossing[];
  status: string | null;
  /** Listed late fixes wait for this device. */
  hasLateFixes: boolean;
  /** The last ignition a fix reported, and whether the device is in a speeding stretch. */
  ignition: boolean | null;
  overspeed: boolean;
  /** The device's speed limit, else its account's; null: none. */
  speedLimitKmh: number | null;
  /** The trip segmenter's state (domain/trips/trip-segmenter.ts); null before its first run. */
  segment: Record<string, unknown> | null;
  /** The server's odometer and engine hours (domain/accumulators/vehicle-accumulators.ts); null or absent before their first run. */
  accumulators?: Record<string, unknown> | null;
  /** Harsh driving and idling (domain/driving/driving-behaviour.ts); null or absent before their first run. */
  driving?: Record<string, unknown> | null;
  /** Fuel refills and drops (domain/fuel/fuel-events.ts); null or absent for a vehicle never seen with a fuel reading. */
  fuel?: Record<string, unknown> | null;
  /** The vehicle's fuel tank capacity in litres; null or absent: unknown. */
  fuelTankLitres?: number | null;
  /** The device's reverse-geocoded address and the point it describes, for its events' positions; null: none yet. */
  knownAddress?: KnownAddress | null;
}

/** A stored fix after a device's cursor, with what the rules read of its attributes. */
export interface EngineFix {
  deviceId: number;
  fixTime: Date;
  valid: boolean;
  latitude: number;
  longitude: number;
  speedKmh: number | null;
  heading: number | null;
  ignition: boolean | null;
  /** The alarm the tracker raised with this fix (`sos`, `powerCut`, `hardBraking`, ...), if any. */
  alarm: string | null;
  /** The tracker's total odometer at this fix, in km (decoders report metres); null if it sends none. */
  odometerKm: number | null;
  /** The driver key (iButton, RFID, card) read with this fix, if any. */
  driverIdentifier: string | null;
  /** The tracker's fuel level in percent (`fuel`) and in litres (`fuelVolume`), as reported; null or absent if it sends none. */
  fuelPercent?: number | null;
  fuelLitres?: number | null;
}

/** A device's state after the step, committed with its new cursor. */
export interface EngineStateUpdate {
  deviceId: number;
  cursor: Date | null;
  inside: number[];
  pending: PendingCrossing[];
  status: string | null;
  ignition: boolean | null;
  overspeed: boolean;
  /** The segmenter's new state; undefined leaves the stored one. */
  segment?: Record<string, unknown>;
  /** The accumulators' new state; undefined leaves the stored one. */
  accumulators?: Record<string, unknown>;
  /** The fuel detector's new state; undefined leaves the stored one. */
  fuel?: Record<string, unknown>;
  /** Harsh driving and idling's new state; undefined leaves the stored one. */
  driving?: Record<string, unknown>;
}

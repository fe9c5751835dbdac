import type { Db } from './database.ts';
import { upsertLatest } from './position-batches.ts';

/** One decoded fix with the telemetry that the status endpoints show. */
export interface DeviceFix {
  deviceId: number;
  fixTime: Date;
  valid: boolean;
  latitude: number;
  longitude: number;
  altitude?: number | null;
  speedKmh?: number | null;
  heading?: number | null;
  satellites?: number | null;
  ignition?: boolean | null;
  motion?: boolean | null;
  odometerKm?: number | null;
  powerVoltage?: number | null;
  backupVoltage?: number | null;
  signalStrength?: number | null;
  connectionType?: string | null;
  address?: string | null;
  driverId?: string | null;
  attributes?: Record<string, unknown>;
}

/**
 * Stores a fix as the device's latest state. The state only moves forward in fix time: an older fix
 * (a tracker unloading its buffer) leaves it as it is, but still counts as a report.
 */
export async function recordDeviceFix(db: Db, fix: DeviceFix, receivedAt: Date = new Date()): Promise<void> {
  await upsertLatest(db, [{ ...fix, receivedAt }]);
}

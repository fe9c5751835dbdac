import type { Db } from './database.ts';
import { upsertLatest } from './position-batches.ts';
import type { DeviceFix } from '../domain/stored-rows.ts';

/**
 * Stores a fix as the device's latest state. The state only moves forward in fix time: an older fix
 * (a tracker unloading its buffer) leaves it as it is, but still counts as a report.
 */
export async function recordDeviceFix(db: Db, fix: DeviceFix, receivedAt: Date = new Date()): Promise<void> {
  await upsertLatest(db, [{ ...fix, receivedAt }]);
}

import type { Db } from './database.ts';
import { upsertLatest, type DeviceFix } from './position-batches.ts';

/**
 * Stores a fix as the device's latest state. The state only moves forward in fix time: an older fix
 * (a tracker unloading its buffer) leaves it as it is, but still counts as a report.
 */
export async function recordDeviceFix(db: Db, fix: DeviceFix, receivedAt: Date = new Date()): Promise<void> {
  await upsertLatest(db, [{ ...fix, receivedAt }]);
}

/** The speed of the device's newest fix, or null before its first (the rule for cutting an engine reads it). */
export async function lastFixSpeed(db: Db, deviceId: number): Promise<number | null> {
  const row = await db.selectFrom('device_states').select(['speed_kmh', 'fix_time']).where('device_id', '=', deviceId).executeTakeFirst();
  return row?.fix_time ? (row.speed_kmh ?? 0) : null;
}

import type { Db } from '../../db/database.ts';
import { pruneGeofenceChanges } from '../../db/geofence-changes.ts';
import { pruneLateFixes } from '../../db/late-fixes.ts';

export interface Retention {
  /** Geofence changes are kept this long: far longer than any engine process takes to read them. */
  geofenceChangesMs: number;
  /** Late-fix entries the engine never came back for (a device that went silent) are dropped after this. */
  lateFixesMs: number;
}

/** Rows deleted per statement: each is a short transaction, never one long one. */
const BATCH = 5_000;

async function inBatches(prune: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await prune(BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

/** Deletes what the engine has finished with and kept past its retention; returns the counts. */
export async function pruneEngineHistory(db: Db, retention: Retention, now = new Date()): Promise<{ geofenceChanges: number; lateFixes: number }> {
  const before = (ms: number) => new Date(now.getTime() - ms);
  return {
    geofenceChanges: await inBatches((limit) => pruneGeofenceChanges(db, before(retention.geofenceChangesMs), limit)),
    lateFixes: await inBatches((limit) => pruneLateFixes(db, before(retention.lateFixesMs), limit)),
  };
}

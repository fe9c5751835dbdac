import type { Db } from '../../db/database.ts';
import { DAY_MS, expiredRanges, missingRanges, readyWindow } from '../../db/position-partition-plan.ts';
import {
  createPositionPartition,
  dropPositionPartition,
  positionPartitions,
  pruneDefaultPositions,
  withPartitionLock,
} from '../../db/position-partitions.ts';

export interface PositionHistorySettings {
  /** Days each partition spans (POSITIONS_PARTITION_DAYS; 1 = daily). */
  partitionDays: number;
  /** Partitions are kept ready from today through this many days ahead (POSITIONS_PARTITIONS_AHEAD_DAYS). */
  aheadDays: number;
  /** Fixes older than this many days go (POSITIONS_RETENTION_DAYS); undefined keeps them all. */
  retentionDays?: number;
}

export interface PartitionMaintenance {
  created: string[];
  /** Fixes the new partitions took over from the default partition. */
  movedFromDefault: number;
  dropped: string[];
  /** Fixes deleted from the default partition for being past the retention. */
  prunedFromDefault: number;
  /** Another engine process held the maintenance lock, so this one left the partitions to it. */
  busy: boolean;
}

/** Each step is its own short transaction; this many bounds a run whatever the catalog holds. */
const MAX_STEPS = 1_000;
const DEFAULT_PRUNE_BATCH = 5_000;

/**
 * Keeps the position history's partitions: makes those missing from today through `aheadDays`
 * ahead, so that ingest's rows land in daily partitions rather than the default one; drops those
 * wholly past the retention; deletes expired fixes from the default partition in batches.
 *
 * One partition per transaction, each re-reading the catalog under the maintenance lock: two engine
 * processes never both make (or drop) the same partition, and an exclusive lock is held for one
 * partition's work only. A step that cannot get its table lock fails the run; the next run (every
 * PRUNE_INTERVAL_S) picks up where it stopped.
 */
export async function maintainPositionPartitions(db: Db, settings: PositionHistorySettings, now = new Date()): Promise<PartitionMaintenance> {
  const result: PartitionMaintenance = { created: [], movedFromDefault: 0, dropped: [], prunedFromDefault: 0, busy: false };
  const window = readyWindow(now, settings.aheadDays);

  for (let step = 0; step < MAX_STEPS; step++) {
    const outcome = await withPartitionLock(db, async (trx) => {
      const { ranges, defaultPartition } = await positionPartitions(trx);
      const next = missingRanges(ranges, window, settings.partitionDays)[0];
      return next ? createPositionPartition(trx, next, defaultPartition) : null;
    });
    if (outcome === undefined) return { ...result, busy: true };
    if (outcome === null) break;
    result.created.push(outcome.name);
    result.movedFromDefault += outcome.moved;
  }

  if (settings.retentionDays === undefined) return result;
  const cutoff = now.getTime() - settings.retentionDays * DAY_MS;
  for (let step = 0; step < MAX_STEPS; step++) {
    const outcome = await withPartitionLock(db, async (trx) => {
      const expired = expiredRanges((await positionPartitions(trx)).ranges, cutoff)[0];
      if (!expired) return null;
      await dropPositionPartition(trx, expired.name);
      return expired.name;
    });
    if (outcome === undefined) return { ...result, busy: true };
    if (outcome === null) break;
    result.dropped.push(outcome);
  }

  const { defaultPartition } = await positionPartitions(db);
  if (defaultPartition) {
    for (;;) {
      const n = await pruneDefaultPositions(db, defaultPartition, new Date(cutoff), DEFAULT_PRUNE_BATCH);
      result.prunedFromDefault += n;
      if (n < DEFAULT_PRUNE_BATCH) break;
    }
  }
  return result;
}

import type { Db } from '../../db/database.ts';
import { DAY_MS, expiredRanges, missingRanges, readyWindow, type PartitionRange } from '../../db/position-partition-plan.ts';
import {
  createPositionPartition,
  dropPositionPartition,
  oldestDefaultFix,
  positionPartitions,
  pruneDefaultPositions,
  withPartitionLock,
  type PositionPartitions,
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
  /** Fixes deleted from the default partition for having arrived longer ago than the retention. */
  prunedFromDefault: number;
  /** Another engine process held the maintenance lock, so this one left the partitions to it. */
  busy: boolean;
}

/** Each step is its own short transaction; this many bounds a run whatever the catalog holds. */
const MAX_STEPS = 1_000;
const DEFAULT_PRUNE_BATCH = 5_000;

/**
 * The next partition to make: one missing from the ready window, or else one for the oldest fix the
 * default partition holds between the cutoff and today (days no engine ran to make partitions for),
 * so that those fixes, too, go with their day's partition instead of staying in the default one.
 */
async function nextRange(trx: Db, partitions: PositionPartitions, window: PartitionRange, settings: PositionHistorySettings, cutoff: number | undefined): Promise<PartitionRange | undefined> {
  const ahead = missingRanges(partitions.ranges, window, settings.partitionDays)[0];
  if (ahead || cutoff === undefined || !partitions.defaultPartition || cutoff >= window.from) return ahead;
  const oldest = await oldestDefaultFix(trx, partitions.defaultPartition, new Date(cutoff), new Date(window.from));
  if (!oldest) return undefined;
  const t = oldest.getTime();
  return missingRanges(partitions.ranges, { from: t, to: t + 1 }, settings.partitionDays).find((r) => r.from <= t && t < r.to);
}

/**
 * Keeps the position history's partitions: makes those missing from today through `aheadDays`
 * ahead, so that ingest's rows land in daily partitions rather than the default one, and those for
 * past days within the retention that the default partition holds fixes of; drops those wholly past
 * the retention; deletes from the default partition the fixes that arrived longer ago than the
 * retention.
 *
 * One partition per transaction, each re-reading the catalog under the maintenance lock: two engine
 * processes never both make (or drop) the same partition, and an exclusive lock is held for one
 * partition's work only. A step that cannot get its table lock fails the run; the next run (every
 * PRUNE_INTERVAL_S) picks up where it stopped.
 */
export async function maintainPositionPartitions(db: Db, settings: PositionHistorySettings, now = new Date()): Promise<PartitionMaintenance> {
  const result: PartitionMaintenance = { created: [], movedFromDefault: 0, dropped: [], prunedFromDefault: 0, busy: false };
  const window = readyWindow(now, settings.aheadDays);
  const cutoff = settings.retentionDays === undefined ? undefined : now.getTime() - settings.retentionDays * DAY_MS;

  for (let step = 0; step < MAX_STEPS; step++) {
    const outcome = await withPartitionLock(db, async (trx) => {
      const partitions = await positionPartitions(trx);
      const next = await nextRange(trx, partitions, window, settings, cutoff);
      return next ? createPositionPartition(trx, next, partitions.defaultPartition) : null;
    });
    if (outcome === undefined) return { ...result, busy: true };
    if (outcome === null) break;
    result.created.push(outcome.name);
    result.movedFromDefault += outcome.moved;
  }

  if (cutoff === undefined) return result;
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

import type { Db } from '../../db/database.ts';
import type { Logger } from '../../runtime/logger.ts';
import { maintainPositionPartitions, type PositionHistorySettings } from './maintain-position-partitions.ts';

/** Keeps the position history's partitions when they are configured, and says what it changed. */
export async function keepPositionHistory(db: Db, settings: PositionHistorySettings | undefined, log: Logger): Promise<void> {
  if (!settings) return;
  const kept = await maintainPositionPartitions(db, settings);
  if (kept.created.length + kept.dropped.length + kept.movedFromDefault + kept.prunedFromDefault > 0) log.info('position partitions maintained', { ...kept });
}

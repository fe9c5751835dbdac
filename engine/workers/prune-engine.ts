import type { Db } from '../../db/database.ts';
import type { Logger } from '../../runtime/logger.ts';
import { keepPositionHistory } from './keep-position-history.ts';
import type { PositionHistorySettings } from './maintain-position-partitions.ts';
import { pruneEngineHistory, type Retention } from './prune-history.ts';

/** The repeated `prune` job: what the engine has finished with goes, then the position partitions are kept. */
export async function pruneEngine(db: Db, settings: { retention: Retention; positionHistory?: PositionHistorySettings }, log: Logger): Promise<void> {
  const pruned = await pruneEngineHistory(db, settings.retention);
  if (Object.values(pruned).some((n) => n > 0)) log.info('pruned what the engine has finished with', pruned);
  await keepPositionHistory(db, settings.positionHistory, log);
}

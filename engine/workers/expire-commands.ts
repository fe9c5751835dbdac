import { expireCommands } from '../../db/commands.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../runtime/logger.ts';

/**
 * The repeated `command-expiry` job: commands whose time to live has passed become `expired` (each
 * logging `command.expired`), in batches until none is left; any number of engine processes may run
 * it at once (SKIP LOCKED).
 */
export async function expireDueCommands(db: Db, log: Logger, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await expireCommands(db, batch);
    total += expired.length;
    if (expired.length < batch) break;
  }
  if (total > 0) log.info('commands expired', { expired: total });
  return total;
}

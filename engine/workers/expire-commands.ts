import { expireCommands } from '../../db/commands.ts';
import type { Db } from '../../db/database.ts';

/**
 * Commands whose time to live has passed become `expired` (each logging `command.expired`), in
 * batches until none is left; any number of engine processes may run it at once (SKIP LOCKED).
 */
export async function expireDueCommands(db: Db, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await expireCommands(db, batch);
    total += expired.length;
    if (expired.length < batch) return total;
  }
}

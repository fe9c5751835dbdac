import type { Db } from '../../db/database.ts';
import { appendEvents } from '../../db/event-log.ts';
import { startDueTravels } from '../../db/travel-progress.ts';

/**
 * Starts the Scheduled travels whose start time has come (one, or all) and logs their `travel.started`
 * in the same transaction: a start job run twice, or racing the catch-up, starts and logs each once.
 * Returns the ids of the travels it started.
 */
export async function startTravels(db: Db, filter: { travelId?: number } = {}): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const { started, events } = await startDueTravels(trx, filter);
    // Last: appending holds the log's lock until the commit (see appendEvents).
    await appendEvents(trx, events);
    return started.map((t) => t.id);
  });
}

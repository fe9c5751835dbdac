import type { Db } from '../../db/database.ts';
import { markInactive } from '../../db/engine-states.ts';
import { appendEvents } from '../../db/event-log.ts';
import { statusChangedEvent } from '../../domain/events/event-payloads.ts';

/** Marks devices silent past the threshold Inactive and logs the change, once per device. */
export async function sweepInactive(db: Db, inactiveAfterMinutes: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const silent = await markInactive(trx, inactiveAfterMinutes);
    await appendEvents(trx, silent.map((s) => statusChangedEvent({ deviceId: s.deviceId, from: s.from, to: 'Inactive', at: s.at })));
    return silent.length;
  });
}

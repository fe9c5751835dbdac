import type { Db } from '../../db/database.ts';
import { insertStatusChanges } from '../../db/engine-results.ts';
import { markInactive } from '../../db/engine-states.ts';

/** Marks devices silent past the threshold Inactive and tells the event stream, once per device. */
export async function sweepInactive(db: Db, inactiveAfterMinutes: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const silent = await markInactive(trx, inactiveAfterMinutes);
    await insertStatusChanges(trx, silent.map((s) => ({ deviceId: s.deviceId, from: s.from, to: 'Inactive', at: s.at })));
    return silent.length;
  });
}

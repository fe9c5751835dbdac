import type { Db } from '../../db/database.ts';
import { refreshEtas, type EtaRefreshSettings } from './refresh-etas.ts';
import { startTravels } from './start-travels.ts';

/** The `travel-start` job: the travel starts if it is still Scheduled, and gets its first ETAs at once. */
export async function startScheduledTravel(db: Db, eta: EtaRefreshSettings, travelId: number): Promise<void> {
  const started = await startTravels(db, { travelId });
  if (started.length > 0) await refreshEtas(db, eta, started);
}

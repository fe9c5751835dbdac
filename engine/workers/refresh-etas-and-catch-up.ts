import type { Db } from '../../db/database.ts';
import { devicesBehind } from '../../db/engine-states.ts';
import type { EngineQueues } from '../engine-queues.ts';
import { refreshEtas, type EtaRefreshSettings } from './refresh-etas.ts';
import { startTravels } from './start-travels.ts';

/** Devices put back on the queue by one catch-up; the next one takes the rest. */
const CATCH_UP_DEVICES = 5_000;

/**
 * The repeated `eta-refresh` job, which is also the catch-up: travels whose start job was lost are
 * started, every travel in progress gets fresh ETAs, and devices whose signal was lost (fixes after
 * their cursor, or late fixes listed) go back on their queues.
 */
export async function refreshEtasAndCatchUp(db: Db, queues: Pick<EngineQueues, 'signal'>, eta: EtaRefreshSettings): Promise<void> {
  await startTravels(db);
  await refreshEtas(db, eta);
  const behind = await devicesBehind(db, CATCH_UP_DEVICES);
  if (behind.length > 0) await queues.signal(behind);
}

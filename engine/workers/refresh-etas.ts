import type { Db } from '../../db/database.ts';
import { etaInputs, saveEstimates } from '../../db/travel-progress.ts';
import { estimateArrivals, type EtaSettings } from '../travel-eta.ts';

/**
 * Live ETAs for In progress travels (all, or the given ones): each pending waypoint's estimated
 * arrival from the vehicle's last position along the remaining chain of geofence centers. A vehicle
 * that never reported has no position to estimate from; its waypoints keep no estimate.
 */
export async function refreshEtas(db: Db, settings: EtaSettings & { movingSpeedKmh: number }, travelIds?: number[]): Promise<number> {
  const now = new Date();
  const estimates: Array<{ travelId: number; seq: number; estimatedArrival: Date }> = [];
  for (const input of await etaInputs(db, settings.movingSpeedKmh, travelIds)) {
    if (input.latitude === null || input.longitude === null) continue;
    const arrivals = estimateArrivals({ latitude: input.latitude, longitude: input.longitude }, now.getTime(), input.pending, input.recentSpeedKmh, settings);
    for (const a of arrivals) estimates.push({ travelId: input.travelId, seq: a.seq, estimatedArrival: new Date(a.estimatedArrival) });
  }
  await saveEstimates(db, estimates, now);
  return estimates.length;
}

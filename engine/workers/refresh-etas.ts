import type { Db } from '../../db/database.ts';
import { appendEvents } from '../../db/event-log.ts';
import { etaInputs, markDelayed, saveEstimates } from '../../db/travel-progress.ts';
import { isLate, travelDelayedEvent } from '../../domain/events/event-payloads.ts';
import { estimateArrivals, type EtaSettings } from '../../domain/travels/travel-eta.ts';

export interface EtaRefreshSettings extends EtaSettings {
  movingSpeedKmh: number;
  /** An estimate later than the expected arrival by more than this many minutes makes the waypoint delayed. */
  onTimeToleranceMinutes: number;
}

/**
 * Live ETAs for In progress travels (all, or the given ones): each pending waypoint's estimated
 * arrival from the vehicle's last position along the remaining chain of geofence centers. A vehicle
 * that never reported has no position to estimate from; its waypoints keep no estimate.
 *
 * A pending waypoint whose new estimate is late past the tolerance (the API's own rule, so the event
 * agrees with the `timing` a client reads) is marked delayed and logs `travel.delayed`, once per
 * waypoint: an estimate that recovers and slips again logs nothing more. Estimates, marks and events
 * commit together.
 */
export async function refreshEtas(db: Db, settings: EtaRefreshSettings, travelIds?: number[]): Promise<number> {
  const now = new Date();
  return db.transaction().execute(async (trx) => {
    const estimates: Array<{ travelId: number; seq: number; estimatedArrival: Date }> = [];
    const late = new Map<string, { input: Awaited<ReturnType<typeof etaInputs>>[number]; seq: number; estimate: Date }>();
    for (const input of await etaInputs(trx, settings.movingSpeedKmh, travelIds)) {
      if (!input.position) continue;
      const from = { latitude: input.position.lat, longitude: input.position.lng };
      const arrivals = estimateArrivals(from, now.getTime(), input.pending, input.recentSpeedKmh, settings);
      for (const [i, a] of arrivals.entries()) {
        const estimate = new Date(a.estimatedArrival);
        estimates.push({ travelId: input.travelId, seq: a.seq, estimatedArrival: estimate });
        const waypoint = input.pending[i]!;
        if (!waypoint.delayed && isLate(estimate, waypoint.expectedArrival, settings.onTimeToleranceMinutes)) {
          late.set(`${input.travelId}:${a.seq}`, { input, seq: a.seq, estimate });
        }
      }
    }
    await saveEstimates(trx, estimates, now);
    const marked = await markDelayed(trx, [...late.values()].map((l) => ({ travelId: l.input.travelId, seq: l.seq })), now);
    const events = marked.map(({ travelId, seq }) => {
      const { input, estimate } = late.get(`${travelId}:${seq}`)!;
      const w = input.pending.find((p) => p.seq === seq)!;
      return travelDelayedEvent(
        { id: travelId, deviceId: input.deviceId },
        { seq, geofenceName: w.geofenceName, expectedArrival: w.expectedArrival, estimatedArrival: estimate },
        now,
        input.position,
      );
    });
    // Last: appending holds the log's lock until the commit (see appendEvents).
    await appendEvents(trx, events);
    return estimates.length;
  });
}

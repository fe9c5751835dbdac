import type { Crossing } from '../geofences/fence-crossings.ts';

export interface WaypointProgress {
  seq: number;
  geofenceId: number | null;
  status: 'pending' | 'completed' | 'cancelled';
}

export interface Arrival {
  seq: number;
  arrivedAt: number;
}

/**
 * Waypoints complete strictly in order: an enter into the geofence of the next pending waypoint
 * completes it at the enter's time; entering a later waypoint's geofence first completes nothing (the
 * vehicle has to come back to the next one). Crossings before the travel started do not count.
 */
export function arrivalsFromCrossings(
  waypoints: readonly WaypointProgress[],
  startedAt: number,
  crossings: readonly Crossing[],
): { arrivals: Arrival[]; completed: boolean } {
  const pending = waypoints.filter((w) => w.status === 'pending').sort((a, b) => a.seq - b.seq);
  const arrivals: Arrival[] = [];
  let next = 0;
  for (const crossing of crossings) {
    if (next >= pending.length) break;
    if (crossing.type !== 'enter' || crossing.fixTime < startedAt) continue;
    if (crossing.geofenceId === pending[next]!.geofenceId) arrivals.push({ seq: pending[next++]!.seq, arrivedAt: crossing.fixTime });
  }
  return { arrivals, completed: pending.length > 0 && next === pending.length };
}

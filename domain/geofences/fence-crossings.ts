import type { PendingCrossing } from './pending-crossing.ts';
import type { GeofenceIndex } from './geofence-index.ts';
import { evaluateMembership } from './geofence-membership.ts';

/** What the engine remembers of a device between evaluations. */
export interface FenceState {
  /** The newest fix evaluated (ms), or null before the first. */
  cursor: number | null;
  /** Geofences the device is inside, confirmed (debounce passed), ascending ids. */
  inside: Int32Array;
  /** Crossings waiting out their dwell time. */
  pending: PendingCrossing[];
}

export interface EvaluatedFix {
  fixTime: number;
  valid: boolean;
  latitude: number;
  longitude: number;
}

export interface Crossing {
  geofenceId: number;
  type: 'enter' | 'exit';
  /** The first fix of the crossing (with a dwell time, the first fix inside or outside). */
  fixTime: number;
  latitude: number;
  longitude: number;
}

/** Dwell times per geofence in ms; a geofence without debounce is absent. */
export type DwellRules = ReadonlyMap<number, { enterMs: number; exitMs: number }>;

const NO_DWELL = { enterMs: 0, exitMs: 0 };

/**
 * Evaluates a device's new fixes, in fix-time order, against its account's geofences: a pure function
 * of (state, fixes), so any worker can replay it and get the same crossings. Fixes without GPS
 * validity, and fixes not newer than the cursor (a buffer unloaded after a dead zone), leave the
 * membership as it is. A geofence deleted since the device entered it is forgotten without an event.
 * Crossings come out ordered by time, an exit before an enter at the same instant.
 */
export function evaluateFixes(
  index: GeofenceIndex | undefined,
  dwell: DwellRules,
  state: FenceState,
  fixes: readonly EvaluatedFix[],
): { state: FenceState; crossings: Crossing[] } {
  let { cursor, inside, pending } = state;
  const crossings: Crossing[] = [];
  for (const fix of fixes) {
    if (cursor !== null && fix.fixTime <= cursor) continue;
    cursor = fix.fixTime;
    if (!fix.valid) continue;
    const change = index ? evaluateMembership(index, inside, fix.latitude, fix.longitude) : inside.length ? emptyChange(inside) : null;
    if (!change) {
      // Back in exactly the confirmed set: whatever was waiting out a dwell did not last.
      if (pending.length) pending = [];
      continue;
    }
    const confirmed = new Set(inside);
    const stillPending: PendingCrossing[] = [];
    const consider = (geofenceId: number, type: 'enter' | 'exit') => {
      const rule = dwell.get(geofenceId) ?? NO_DWELL;
      const dwellMs = type === 'enter' ? rule.enterMs : rule.exitMs;
      const waiting = pending.find((p) => p.geofenceId === geofenceId && p.type === type);
      const first = waiting ?? { geofenceId, type, since: fix.fixTime, latitude: fix.latitude, longitude: fix.longitude };
      if (fix.fixTime - first.since >= dwellMs) {
        crossings.push({ geofenceId, type, fixTime: first.since, latitude: first.latitude, longitude: first.longitude });
        if (type === 'enter') confirmed.add(geofenceId);
        else confirmed.delete(geofenceId);
      } else {
        stillPending.push(first);
      }
    };
    for (const id of change.exited) {
      if (!index || !index.has(id)) confirmed.delete(id);
      else consider(id, 'exit');
    }
    for (const id of change.entered) consider(id, 'enter');
    pending = stillPending;
    inside = Int32Array.from([...confirmed].sort((a, b) => a - b));
  }
  crossings.sort((a, b) => a.fixTime - b.fixTime || (a.type === b.type ? 0 : a.type === 'exit' ? -1 : 1));
  return { state: { cursor, inside, pending }, crossings };
}

/** An account without geofences: the device has left whatever it was in. */
function emptyChange(inside: Int32Array) {
  return { inside: new Int32Array(0), entered: new Int32Array(0), exited: inside };
}

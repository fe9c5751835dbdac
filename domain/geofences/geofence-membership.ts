import type { GeofenceIndex } from './geofence-index.ts';

/** What one position changed for a device: the geofences it is in now, and those it entered and left. */
export interface MembershipChange {
  /** Ids of the geofences covering the position, ascending. */
  inside: Int32Array;
  /** In `inside`, not in the previous set, ascending. */
  entered: Int32Array;
  /** In the previous set, not in `inside`, ascending. A geofence no longer in the index counts as left. */
  exited: Int32Array;
}

// Reused across calls: the index writes candidate ids here, so an unchanged device allocates nothing.
let scratch = new Int32Array(64);

/**
 * Membership of a device after one position, as a pure function of its previous membership (ascending
 * unique ids) and the position: null when the position is in exactly the previous geofences (the common
 * case, and free of allocation), otherwise the new set with the entered and exited differences.
 */
export function evaluateMembership(index: GeofenceIndex, previous: Int32Array, lat: number, lng: number): MembershipChange | null {
  let count = index.query(lat, lng, scratch);
  if (count > scratch.length) {
    scratch = new Int32Array(2 * count);
    count = index.query(lat, lng, scratch);
  }
  if (count === previous.length) {
    let same = true;
    for (let i = 0; i < count && same; i++) same = scratch[i] === previous[i];
    if (same) return null;
  }
  const inside = scratch.slice(0, count);
  return { inside, ...differences(previous, inside) };
}

/** Ids only in `after` (entered) and only in `before` (exited), both inputs ascending. */
export function differences(before: Int32Array, after: Int32Array): { entered: Int32Array; exited: Int32Array } {
  const entered: number[] = [];
  const exited: number[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (j === after.length || (i < before.length && before[i]! < after[j]!)) exited.push(before[i++]!);
    else if (i === before.length || after[j]! < before[i]!) entered.push(after[j++]!);
    else {
      i++;
      j++;
    }
  }
  return { entered: Int32Array.from(entered), exited: Int32Array.from(exited) };
}

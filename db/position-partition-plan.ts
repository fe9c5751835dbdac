/**
 * Which position partitions to make and which to drop: pure functions of the partitions that exist,
 * the clock and the settings, so the rules are tested without a database.
 */

export const DAY_MS = 86_400_000;

/** A range partition's bounds in ms since the epoch, `from` inclusive, `to` exclusive (as PostgreSQL's). */
export interface PartitionRange {
  from: number;
  to: number;
}

/**
 * Partition slots are counted from a Monday (5 January 1970), so that 7-day partitions run Monday to
 * Sunday; for daily partitions any midnight would do.
 */
const ANCHOR_MS = 4 * DAY_MS;

/** The UTC midnight at or before `ms`. */
export const utcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * The ranges to create so that every instant of `window` falls in a partition: one per slot of
 * `partitionDays` that the window touches, minus whatever existing partitions already cover. A slot
 * partly covered (partitions made with another width, or by hand) gets its gaps only, since
 * PostgreSQL refuses overlapping partitions. Oldest first.
 */
export function missingRanges(existing: PartitionRange[], window: PartitionRange, partitionDays: number): PartitionRange[] {
  const width = partitionDays * DAY_MS;
  const sorted = [...existing].sort((a, b) => a.from - b.from);
  const missing: PartitionRange[] = [];
  const firstSlot = ANCHOR_MS + Math.floor((window.from - ANCHOR_MS) / width) * width;
  for (let slot = firstSlot; slot < window.to; slot += width) {
    const end = slot + width;
    let cursor = slot;
    for (const e of sorted) {
      if (e.to <= cursor || e.from >= end) continue;
      if (e.from > cursor) missing.push({ from: cursor, to: e.from });
      cursor = Math.max(cursor, e.to);
      if (cursor >= end) break;
    }
    if (cursor < end) missing.push({ from: cursor, to: end });
  }
  return missing;
}

/** The window kept ready: from today's UTC midnight through the end of the day `aheadDays` later. */
export function readyWindow(now: Date, aheadDays: number): PartitionRange {
  const today = utcDay(now.getTime());
  return { from: today, to: today + (aheadDays + 1) * DAY_MS };
}

/**
 * Partitions whose every fix is older than the retention: the newest of them ends at or before the
 * cutoff. A partition straddling the cutoff stays until it has passed whole, so no fix goes early.
 */
export function expiredRanges<T extends PartitionRange>(partitions: T[], cutoff: number): T[] {
  return partitions.filter((p) => p.to <= cutoff).sort((a, b) => a.from - b.from);
}

/** `positions_p20240501` for a partition starting at a midnight, `positions_p20240501_1230` otherwise. */
export function partitionName(from: number): string {
  const iso = new Date(from).toISOString();
  const day = iso.slice(0, 10).replaceAll('-', '');
  const time = iso.slice(11, 16).replace(':', '');
  return `positions_p${day}${time === '0000' ? '' : `_${time}`}`;
}

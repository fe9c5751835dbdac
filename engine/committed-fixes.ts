import { engineFixOf, type CommittedFixLookup } from '../db/engine-states.ts';
import type { EngineFix } from '../domain/engine-step/engine-state.ts';
import type { StoredFix } from '../domain/stored-rows.ts';

/** Fixes held at most, all devices together (~200 bytes each): past it the store starts again empty. */
const DEFAULT_MAX_FIXES = 200_000;

/**
 * The fixes this process's ingest committed and its engine has not evaluated yet, per device, so an
 * engine step in the same process need not read back from the database what was written to it a
 * moment ago (readEngineStep checks they are complete before using them). A device's fixes leave once
 * the engine's cursor passes them. A fix the engine could not take from memory exactly (see
 * engineFixOf) blocks its device's memory until the cursor passes it, and the whole store starts again
 * if it ever holds more than its bound (the engine far behind, or its jobs taken by other processes):
 * either way the devices are read from the database, as after a restart.
 */
export class CommittedFixes implements CommittedFixLookup {
  /** Per device, oldest first by fix time; a blocked entry stands for a fix memory cannot give. */
  private readonly byDevice = new Map<number, Array<EngineFix | { fixTime: Date; blocked: true }>>();
  private held = 0;

  constructor(private readonly maxFixes = DEFAULT_MAX_FIXES) {}

  /** Told each batch's fixes once it is committed. */
  add(fixes: readonly StoredFix[]): void {
    if (this.held + fixes.length > this.maxFixes) this.clear();
    for (const fix of fixes) {
      let list = this.byDevice.get(fix.deviceId);
      if (!list) this.byDevice.set(fix.deviceId, (list = []));
      const entry = engineFixOf(fix) ?? { fixTime: fix.fixTime, blocked: true as const };
      const time = fix.fixTime.getTime();
      // Mostly in order: walk back from the end to its place; a resent fix (same time) is already held.
      let at = list.length;
      while (at > 0 && list[at - 1]!.fixTime.getTime() > time) at--;
      if (at > 0 && list[at - 1]!.fixTime.getTime() === time) continue;
      list.splice(at, 0, entry);
      this.held++;
    }
  }

  after(deviceId: number, cursor: Date | null): EngineFix[] | undefined {
    const list = this.byDevice.get(deviceId);
    if (!list) return undefined;
    const from = cursor === null ? 0 : firstAfter(list, cursor.getTime());
    const fixes: EngineFix[] = [];
    for (let i = from; i < list.length; i++) {
      const entry = list[i]!;
      if ('blocked' in entry) return undefined;
      fixes.push(entry);
    }
    return fixes;
  }

  /** The engine's cursors after a committed step: the fixes at or before them are done with. */
  evaluated(cursors: ReadonlyArray<{ deviceId: number; cursor: Date | null }>): void {
    for (const { deviceId, cursor } of cursors) {
      const list = this.byDevice.get(deviceId);
      if (!list || cursor === null) continue;
      const from = firstAfter(list, cursor.getTime());
      if (from === list.length) this.byDevice.delete(deviceId);
      else list.splice(0, from);
      this.held -= from;
    }
  }

  /** Fixes held now. */
  get size(): number {
    return this.held;
  }

  private clear(): void {
    this.byDevice.clear();
    this.held = 0;
  }
}

/** The index of the first entry later than `time` (the list is in fix-time order). */
function firstAfter(list: ReadonlyArray<{ fixTime: Date }>, time: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid]!.fixTime.getTime() <= time) low = mid + 1;
    else high = mid;
  }
  return low;
}

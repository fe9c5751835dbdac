import type { DeviceCrossing } from '../geofences/geofence-visits.ts';
import { lateExcursions, type StoredCrossing } from '../geofences/late-crossings.ts';
import type { GeofenceSource } from './evaluate-engine-step.ts';

/** A locked device after its fixes were evaluated in order: what its late fixes are measured against. */
export interface LateDevice {
  deviceId: number;
  accountId: number;
  mode: 'live' | 'test';
  /** The cursor before this job: the window is measured back from it. */
  cursorBefore: Date | null;
  /** The cursor after this job's evaluation in order. */
  cursorAfter: Date | null;
  /** Fix times (ms) this job evaluated in order. */
  readInOrder: ReadonlySet<number>;
}

export interface LateFixCounts {
  deviceId: number;
  /** Late fixes evaluated (within the window behind the cursor). */
  evaluated: number;
  /** Late fixes too far behind the cursor: stored, counted, not evaluated. */
  ignored: number;
}

/** The stretch of a device's timeline its late fixes in the window fall in: to read, then evaluate. */
export interface LateWindow {
  deviceId: number;
  accountId: number;
  mode: 'live' | 'test';
  /** The earliest late fix in the window, and the new cursor. */
  from: Date;
  to: Date;
  /** The late fix times (ms) in the window. */
  late: ReadonlySet<number>;
}

export interface LatePlan {
  /** Every late fix, however far behind: an alarm is not a crossing to place on a timeline, it happened. */
  late: Array<{ deviceId: number; fixTime: number }>;
  counts: LateFixCounts[];
  windows: LateWindow[];
}

/**
 * Which listed fixes are late, and which of those are evaluated. Late means "not evaluated in order,
 * and at or before the new cursor": a listed fix after the new cursor is read in order by a later job,
 * and one this job read in order is done. A listed fix after the old cursor is late too when this job
 * did not read it: its batch committed after the read of the fixes after the cursor (that statement's
 * snapshot did not hold it) and before the list was taken, and the new cursor has passed it, so no
 * later read in order would ever see it. Those at most `windowMs` behind the old cursor are evaluated
 * (when the device has geofences to cross), the older ones only counted.
 */
export function planLateFixes(devices: readonly LateDevice[], listed: ReadonlyMap<number, number[]>, windowMs: number, geofences: GeofenceSource): LatePlan {
  const plan: LatePlan = { late: [], counts: [], windows: [] };
  for (const device of devices) {
    const times = listed.get(device.deviceId);
    if (!times || device.cursorAfter === null) continue;
    const after = device.cursorAfter.getTime();
    const behind = times.filter((t) => t <= after && !device.readInOrder.has(t));
    if (behind.length === 0) continue;
    for (const t of behind) plan.late.push({ deviceId: device.deviceId, fixTime: t });
    const from = (device.cursorBefore ?? device.cursorAfter).getTime() - windowMs;
    const inWindow = new Set<number>();
    let earliest = Number.POSITIVE_INFINITY;
    for (const t of behind) {
      if (t < from) continue;
      inWindow.add(t);
      if (t < earliest) earliest = t;
    }
    plan.counts.push({ deviceId: device.deviceId, evaluated: inWindow.size, ignored: behind.length - inWindow.size });
    // No geofence, no crossing to find: the window is not worth reading.
    if (inWindow.size === 0 || !geofences.index(device.accountId, device.mode)) continue;
    plan.windows.push({ deviceId: device.deviceId, accountId: device.accountId, mode: device.mode, from: new Date(earliest), to: device.cursorAfter, late: inWindow });
  }
  return plan;
}

/** A window as read: its positions from the evaluated fix before it, and the crossings stored around them. */
export interface ReadWindow {
  window: LateWindow;
  positions: Array<{ fixTime: Date; valid: boolean; latitude: number; longitude: number }>;
  /** The geofences the device was inside just before the first position. */
  insideBefore: ReadonlySet<number>;
  /** The stored crossings from the first position through the new cursor, in time order. */
  stored: readonly StoredCrossing[];
}

/** An excursion's visit: one inside a geofence is a visit of its own; one outside splits the visit it interrupts. */
export interface ExcursionVisit {
  deviceId: number;
  geofenceId: number;
  into: { type: 'enter' | 'exit'; fixTime: Date };
  back: { fixTime: Date };
}

/**
 * The crossings the late fixes reveal in their windows (late-crossings.ts: only what the evaluation in
 * order missed is added, nothing moved), in time order, and their visits.
 */
export function lateWindowCrossings(windows: readonly ReadWindow[], geofences: GeofenceSource): { crossings: DeviceCrossing[]; visits: ExcursionVisit[] } {
  const crossings: DeviceCrossing[] = [];
  const visits: ExcursionVisit[] = [];
  for (const { window, positions, insideBefore, stored } of windows) {
    const fixes = positions.map((p) => ({ fixTime: p.fixTime.getTime(), valid: p.valid, latitude: p.latitude, longitude: p.longitude, late: window.late.has(p.fixTime.getTime()) }));
    for (const e of lateExcursions(geofences.index(window.accountId, window.mode), geofences.dwellRules, insideBefore, stored, fixes)) {
      for (const c of [e.into, e.back]) {
        crossings.push({ deviceId: window.deviceId, geofenceId: c.geofenceId, type: c.type, fixTime: new Date(c.fixTime), latitude: c.latitude, longitude: c.longitude });
      }
      visits.push({ deviceId: window.deviceId, geofenceId: e.geofenceId, into: { type: e.into.type, fixTime: new Date(e.into.fixTime) }, back: { fixTime: new Date(e.back.fixTime) } });
    }
  }
  crossings.sort((a, b) => a.fixTime.getTime() - b.fixTime.getTime());
  return { crossings, visits };
}

import type { Db } from '../../db/database.ts';
import type { NewEvent } from '../../db/event-log.ts';
import type { DeviceMode } from '../../db/schema.ts';
import { insertCrossingEvents, recordExcursionVisits, storedCrossingsAround, type DeviceCrossing } from '../../db/engine-results.ts';
import { countLateFixes, positionsAround, takeLateFixes } from '../../db/late-fixes.ts';
import { lateFixAlarmEvents } from '../../db/vehicle-events.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import { lateExcursions } from '../../domain/geofences/late-crossings.ts';
import type { DeviceLateFixes } from '../late-fix-log.ts';

export interface LateDevice {
  deviceId: number;
  accountId: number;
  mode: DeviceMode;
  /** The cursor before this job: the window is measured back from it. */
  cursorBefore: Date | null;
  /** The cursor after this job's evaluation in order. */
  cursorAfter: Date | null;
  /** Fix times (ms) this job evaluated in order. */
  readInOrder: ReadonlySet<number>;
}

export interface LateOutcome {
  /** Late fixes evaluated (within the window behind the cursor). */
  evaluated: number;
  /** Late fixes too far behind the cursor: stored, counted, not evaluated. */
  ignored: number;
  /** Events the late fixes added, for the caller to log with its own. */
  events: NewEvent[];
  /** The counts per device that had any. */
  devices: DeviceLateFixes[];
}

/**
 * The late fixes of locked devices, in the engine's transaction: those at most `windowMs` behind the
 * cursor are evaluated against the stored timeline around them (lateExcursions: only crossings the
 * evaluation in order missed are added, none moved), the older ones only counted. Their list entries
 * are taken in the same transaction, so a job that fails leaves them for the next.
 *
 * Late means "not evaluated in order, and at or before the new cursor": a listed fix after the new
 * cursor is read in order by a later job, and one this job read in order is done. A listed fix after
 * the old cursor is late too when this job did not read it: its batch committed after the read of
 * the fixes after the cursor (that statement's snapshot did not hold it) and before the list was
 * taken, and the new cursor has passed it, so no later read in order would ever see it.
 */
export async function evaluateLateFixes(trx: Db, catalog: GeofenceCatalog, devices: LateDevice[], windowMs: number): Promise<LateOutcome> {
  const outcome: LateOutcome = { evaluated: 0, ignored: 0, events: [], devices: [] };
  if (devices.length === 0) return outcome;
  const listed = await takeLateFixes(trx, devices.map((d) => d.deviceId));
  const counts = outcome.devices;
  const crossings: DeviceCrossing[] = [];
  const visits: Parameters<typeof recordExcursionVisits>[1] = [];
  const late: Array<{ deviceId: number; fixTime: number }> = [];
  for (const device of devices) {
    const times = listed.get(device.deviceId);
    if (!times || device.cursorAfter === null) continue;
    const after = device.cursorAfter.getTime();
    const behind = times.filter((t) => t <= after && !device.readInOrder.has(t));
    if (behind.length === 0) continue;
    // However far behind: an alarm is not a crossing to place on a timeline, it happened.
    for (const t of behind) late.push({ deviceId: device.deviceId, fixTime: t });
    const from = (device.cursorBefore ?? device.cursorAfter).getTime() - windowMs;
    const inWindow = new Set<number>();
    let earliest = Number.POSITIVE_INFINITY;
    for (const t of behind) {
      if (t < from) continue;
      inWindow.add(t);
      if (t < earliest) earliest = t;
    }
    counts.push({ deviceId: device.deviceId, evaluated: inWindow.size, ignored: behind.length - inWindow.size });
    const index = catalog.index(device.accountId, device.mode);
    // No geofence, no crossing to find: the window is not worth reading.
    if (inWindow.size === 0 || !index) continue;
    const positions = await positionsAround(trx, device.deviceId, new Date(earliest), device.cursorAfter);
    if (positions.length === 0) continue;
    const stored = await storedCrossingsAround(trx, device.deviceId, positions[0]!.fixTime, device.cursorAfter);
    const fixes = positions.map((p) => ({ fixTime: p.fixTime.getTime(), valid: p.valid, latitude: p.latitude, longitude: p.longitude, late: inWindow.has(p.fixTime.getTime()) }));
    for (const e of lateExcursions(index, catalog.dwellRules, stored.insideBefore, stored.crossings, fixes)) {
      for (const c of [e.into, e.back]) {
        crossings.push({ deviceId: device.deviceId, geofenceId: c.geofenceId, type: c.type, fixTime: new Date(c.fixTime), latitude: c.latitude, longitude: c.longitude });
      }
      visits.push({ deviceId: device.deviceId, geofenceId: e.geofenceId, into: { type: e.into.type, fixTime: new Date(e.into.fixTime) }, back: { fixTime: new Date(e.back.fixTime) } });
    }
  }
  crossings.sort((a, b) => a.fixTime.getTime() - b.fixTime.getTime());
  outcome.events = [...(await insertCrossingEvents(trx, crossings)), ...(await lateFixAlarmEvents(trx, late))];
  await recordExcursionVisits(trx, visits);
  await countLateFixes(trx, counts);
  for (const c of counts) {
    outcome.evaluated += c.evaluated;
    outcome.ignored += c.ignored;
  }
  return outcome;
}

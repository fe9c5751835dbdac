import type { Db } from '../../db/database.ts';
import { insertCrossingEvents, recordExcursionVisits, storedCrossingsAround, type DeviceCrossing } from '../../db/engine-results.ts';
import { countLateFixes, positionsAround, takeLateFixes } from '../../db/late-fixes.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import { lateExcursions } from '../late-crossings.ts';

export interface LateDevice {
  deviceId: number;
  accountId: number;
  /** The cursor before this job: listed fixes after it were just evaluated in order. */
  cursorBefore: Date | null;
  /** The cursor after this job's evaluation in order. */
  cursorAfter: Date | null;
}

export interface LateOutcome {
  /** Late fixes evaluated (within the window behind the cursor). */
  evaluated: number;
  /** Late fixes too far behind the cursor: stored, counted, not evaluated. */
  ignored: number;
  /** Events the late fixes added. */
  events: number;
}

/**
 * The late fixes of locked devices, in the engine's transaction: those at most `windowMs` behind the
 * cursor are evaluated against the stored timeline around them (lateExcursions: only crossings the
 * evaluation in order missed are added, none moved), the older ones only counted. Their list entries
 * are taken in the same transaction, so a job that fails leaves them for the next.
 */
export async function evaluateLateFixes(trx: Db, catalog: GeofenceCatalog, devices: LateDevice[], windowMs: number): Promise<LateOutcome> {
  const outcome: LateOutcome = { evaluated: 0, ignored: 0, events: 0 };
  if (devices.length === 0) return outcome;
  const listed = await takeLateFixes(trx, devices.map((d) => d.deviceId));
  const counts: Array<{ deviceId: number; evaluated: number; ignored: number }> = [];
  const crossings: DeviceCrossing[] = [];
  const visits: Parameters<typeof recordExcursionVisits>[1] = [];
  for (const device of devices) {
    const times = listed.get(device.deviceId);
    if (!times || device.cursorBefore === null || device.cursorAfter === null) continue;
    const cursor = device.cursorBefore.getTime();
    const behind = times.filter((t) => t <= cursor);
    const inWindow = new Set(behind.filter((t) => t >= cursor - windowMs));
    counts.push({ deviceId: device.deviceId, evaluated: inWindow.size, ignored: behind.length - inWindow.size });
    if (inWindow.size === 0) continue;
    const positions = await positionsAround(trx, device.deviceId, new Date(Math.min(...inWindow)), device.cursorAfter);
    if (positions.length === 0) continue;
    const stored = await storedCrossingsAround(trx, device.deviceId, positions[0]!.fixTime, device.cursorAfter);
    const fixes = positions.map((p) => ({ fixTime: p.fixTime.getTime(), valid: p.valid, latitude: p.latitude, longitude: p.longitude, late: inWindow.has(p.fixTime.getTime()) }));
    for (const e of lateExcursions(catalog.index(device.accountId), catalog.dwellRules, stored.insideBefore, stored.crossings, fixes)) {
      for (const c of [e.into, e.back]) {
        crossings.push({ deviceId: device.deviceId, geofenceId: c.geofenceId, type: c.type, fixTime: new Date(c.fixTime), latitude: c.latitude, longitude: c.longitude });
      }
      visits.push({ deviceId: device.deviceId, geofenceId: e.geofenceId, into: { type: e.into.type, fixTime: new Date(e.into.fixTime) }, back: { fixTime: new Date(e.back.fixTime) } });
    }
  }
  crossings.sort((a, b) => a.fixTime.getTime() - b.fixTime.getTime());
  outcome.events = await insertCrossingEvents(trx, crossings);
  await recordExcursionVisits(trx, visits);
  await countLateFixes(trx, counts);
  for (const c of counts) {
    outcome.evaluated += c.evaluated;
    outcome.ignored += c.ignored;
  }
  return outcome;
}

import type { Db } from '../../db/database.ts';
import { insertCrossings, recordExcursionVisits, storedCrossingsAround } from '../../db/engine-results.ts';
import { countLateFixes, positionsAround, takeLateFixes } from '../../db/late-fixes.ts';
import { lateFixAlarms } from '../../db/vehicle-events.ts';
import { lateWindowCrossings, planLateFixes, type LateDevice, type ReadWindow } from '../../domain/engine-step/late-fix-plan.ts';
import { alarmEvent, geofenceCrossingEvent, type NewEvent } from '../../domain/events/event-payloads.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import type { DeviceLateFixes } from '../late-fix-log.ts';

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
 * The late fixes of locked devices, in the engine's transaction, after their fixes in order were
 * written: their list entries are taken (in the same transaction, so a job that fails leaves them for
 * the next), planned (late-fix-plan.ts: which are late, which within `windowMs` behind the cursor),
 * the stored timeline around those read, the crossings they reveal decided, and those written with
 * their visits and the counts. Alarms count however far behind a fix came.
 */
export async function evaluateLateFixes(trx: Db, catalog: GeofenceCatalog, devices: LateDevice[], windowMs: number): Promise<LateOutcome> {
  const outcome: LateOutcome = { evaluated: 0, ignored: 0, events: [], devices: [] };
  if (devices.length === 0) return outcome;
  const plan = planLateFixes(devices, await takeLateFixes(trx, devices.map((d) => d.deviceId)), windowMs, catalog);

  const windows: ReadWindow[] = [];
  for (const window of plan.windows) {
    const positions = await positionsAround(trx, window.deviceId, window.from, window.to);
    if (positions.length === 0) continue;
    const stored = await storedCrossingsAround(trx, window.deviceId, positions[0]!.fixTime, window.to);
    windows.push({ window, positions, insideBefore: stored.insideBefore, stored: stored.crossings });
  }
  const alarms = await lateFixAlarms(trx, plan.late);
  const found = lateWindowCrossings(windows, catalog);

  const crossings = await insertCrossings(trx, found.crossings);
  await recordExcursionVisits(trx, found.visits);
  await countLateFixes(trx, plan.counts);
  outcome.events = [...crossings.map(geofenceCrossingEvent), ...alarms.map((a) => alarmEvent(a.deviceId, a.alarm, a.position.fixTime, a.position))];
  outcome.devices = plan.counts;
  for (const c of plan.counts) {
    outcome.evaluated += c.evaluated;
    outcome.ignored += c.ignored;
  }
  return outcome;
}

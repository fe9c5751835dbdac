import type { Db } from '../../db/database.ts';
import { appendEvents } from '../../db/event-log.ts';
import { maintenanceToCheck, markMaintenanceAlert } from '../../db/maintenance.ts';
import { maintenanceEvent, type NewEvent } from '../../domain/events/event-payloads.ts';
import { alertsToLog, currentReading, thresholdKey } from '../../domain/maintenance/maintenance-schedule.ts';

/**
 * The repeated `maintenance-check` job: each maintenance item whose vehicle has reached its next
 * threshold logs `vehicle.maintenance.due`, and past the tolerance `vehicle.maintenance.overdue`,
 * once per threshold (docs/api/maintenance.md). Read outside the transaction; inside it each alert is
 * recorded on its item only if not already recorded for that threshold (a conditional update, so two
 * engine processes checking at once log it once), and its event is appended with it. Event time: now,
 * when the check found it.
 */
export async function checkMaintenance(db: Db, now = new Date()): Promise<number> {
  const found = (await maintenanceToCheck(db))
    .map((item) => {
      const reading = currentReading(item.kind, item, now);
      return { item, reading, alerts: reading === null ? [] : alertsToLog(item, reading) };
    })
    .filter((f) => f.alerts.length > 0);
  if (found.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    const events: NewEvent[] = [];
    for (const { item, reading, alerts } of found) {
      for (const alert of alerts) {
        if (!(await markMaintenanceAlert(trx, item.id, alert, item.nextDue, thresholdKey(item.nextDue)))) continue;
        events.push(maintenanceEvent(alert, {
          id: item.id, deviceId: item.deviceId, name: item.name, kind: item.kind, interval: item.interval, tolerance: item.tolerance,
          nextDue: item.nextDue, current: reading!,
        }, now, item.position));
      }
    }
    // Last: appending holds the log's lock until the commit (see appendEvents).
    await appendEvents(trx, events);
    return events.length;
  });
}

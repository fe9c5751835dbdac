import type { Db } from '../../db/database.ts';
import { appendEvents } from '../../db/event-log.ts';
import { maintenanceToCheck, markMaintenanceAlerts, type CheckedItem } from '../../db/maintenance.ts';
import { maintenanceEvent, type NewEvent } from '../../domain/events/event-payloads.ts';
import { alertsToLog, currentReading, thresholdKey, utcDate, type Reading } from '../../domain/maintenance/maintenance-schedule.ts';

/**
 * The repeated `maintenance-check` job: each maintenance item whose vehicle has reached its next
 * threshold logs `vehicle.maintenance.due`, and past the tolerance `vehicle.maintenance.overdue`,
 * once per threshold (docs/api/maintenance.md). Read outside the transaction; inside it each alert is
 * recorded on its item only if not already recorded for that threshold (so two engine processes
 * checking at once log it once), and the events of those recorded are appended with them. Event time:
 * now, when the check found it.
 */
export async function checkMaintenance(db: Db, now = new Date()): Promise<number> {
  const found: Array<{ item: CheckedItem; reading: Reading; alert: 'due' | 'overdue' }> = [];
  for (const item of await maintenanceToCheck(db, utcDate(now))) {
    const reading = currentReading(item.kind, item, now);
    for (const alert of alertsToLog(item, reading)) found.push({ item, reading, alert });
  }
  if (found.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    const marked = {
      due: await markMaintenanceAlerts(trx, 'due', pick(found, 'due')),
      overdue: await markMaintenanceAlerts(trx, 'overdue', pick(found, 'overdue')),
    };
    const events: NewEvent[] = found
      .filter(({ item, alert }) => marked[alert].has(item.id))
      .map(({ item, reading, alert }) => maintenanceEvent(alert, {
        id: item.id, deviceId: item.deviceId, name: item.name, kind: item.kind, interval: item.interval, tolerance: item.tolerance,
        nextDue: item.nextDue, current: reading!,
      }, now, item.position));
    // Last: appending holds the log's lock until the commit (see appendEvents).
    await appendEvents(trx, events);
    return events.length;
  });
}

const pick = (found: Array<{ item: CheckedItem; alert: 'due' | 'overdue' }>, alert: 'due' | 'overdue') =>
  found.filter((f) => f.alert === alert).map(({ item }) => ({ id: item.id, nextDue: item.nextDue, key: thresholdKey(item.nextDue) }));

import { sql } from 'kysely';
import { alarmEvent, type EventPosition, type NewEvent } from '../domain/events/event-payloads.ts';
import type { StoredReport } from '../domain/stored-rows.ts';
import type { Db } from './database.ts';
import { reportTime } from './device-reports.ts';

/**
 * The alarms of reports without a fix, timed by the device's own time for the report (or, when it sent
 * none, the server's receipt: such a report sent again cannot be told from a new one).
 */
export function reportAlarmEvents(reports: readonly StoredReport[]): NewEvent[] {
  const events: NewEvent[] = [];
  for (const r of reports) {
    const alarm = r.attributes?.alarm;
    if (typeof alarm === 'string' && alarm !== '') events.push(alarmEvent(r.deviceId, alarm, reportTime(r), null));
  }
  return events;
}

/**
 * The alarms of fixes that arrived late (older than fixes already evaluated), in fix-time order: a
 * panic pressed in a tunnel and sent from the tracker's buffer must not be lost for arriving after
 * newer fixes. Ignition and overspeed are transitions in fix order and are not revised by a late fix.
 */
export async function lateFixAlarms(trx: Db, fixes: ReadonlyArray<{ deviceId: number; fixTime: number }>): Promise<Array<{ deviceId: number; alarm: string; position: EventPosition }>> {
  if (fixes.length === 0) return [];
  const { rows } = await sql<{
    device_id: number; fix_time: Date; latitude: number; longitude: number; speed_kmh: number | null; heading: number | null; alarm: string;
  }>`
    SELECT p.device_id, p.fix_time, p.latitude, p.longitude, p.speed_kmh, p.heading, p.attributes->>'alarm' AS alarm
    FROM unnest(${fixes.map((f) => f.deviceId)}::int[], ${fixes.map((f) => new Date(f.fixTime).toISOString())}::timestamptz[]) AS l(device_id, fix_time)
    JOIN positions p ON p.device_id = l.device_id AND p.fix_time = l.fix_time
    WHERE p.attributes->>'alarm' <> ''
    ORDER BY p.fix_time
  `.execute(trx);
  return rows.map((r) => ({
    deviceId: r.device_id, alarm: r.alarm, position: { lat: r.latitude, lng: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, fixTime: r.fix_time },
  }));
}

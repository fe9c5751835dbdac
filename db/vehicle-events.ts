import { sql } from 'kysely';
import type { EventType } from '../domain/events/event-catalog.ts';
import type { VehicleSignal } from '../domain/vehicle-signals.ts';
import type { Db } from './database.ts';
import type { EventPosition, NewEvent } from './event-log.ts';
import type { NewFix } from './engine-states.ts';
import { reportTime } from './device-reports.ts';
import type { StoredReport } from '../domain/stored-rows.ts';

/** The alarm name a tracker's SOS (panic) button raises; every other alarm is a `vehicle.alarm`. */
export const PANIC_ALARM = 'sos';

export const alarmEventType = (alarm: string): EventType => (alarm === PANIC_ALARM ? 'vehicle.panic' : 'vehicle.alarm');

/**
 * An alarm as an event. It is named by device, time and alarm, the same whether it came with a fix or
 * in a report without one: a tracker that sends the same record again (it missed our ACK) adds nothing.
 */
export function alarmEvent(deviceId: number, alarm: string, at: Date, position: EventPosition | null): NewEvent {
  return {
    type: alarmEventType(alarm),
    occurredAt: at,
    deviceId,
    position,
    data: { alarm },
    dedupeKey: `alarm:${deviceId}:${at.getTime()}:${alarm}`,
  };
}

export const fixPosition = (f: NewFix): EventPosition => ({ lat: f.latitude, lng: f.longitude, speedKmh: f.speedKmh, heading: f.heading, fixTime: f.fixTime });

/** A device's detected signals (engine/vehicle-signals.ts) as events, each named by the fix that showed it. */
export function vehicleSignalEvents(deviceId: number, fixes: readonly NewFix[], signals: readonly VehicleSignal[], speedLimitKmh: number | null, out: NewEvent[]): void {
  for (const s of signals) {
    const f = fixes[s.fix]!;
    const at = f.fixTime.getTime();
    switch (s.kind) {
      case 'ignition.on':
      case 'ignition.off':
        out.push({ type: `vehicle.${s.kind}`, occurredAt: f.fixTime, deviceId, position: fixPosition(f), dedupeKey: `${s.kind}:${deviceId}:${at}` });
        break;
      case 'overspeed':
        out.push({
          type: 'vehicle.overspeed', occurredAt: f.fixTime, deviceId, position: fixPosition(f),
          data: { speedKmh: f.speedKmh, limitKmh: speedLimitKmh }, dedupeKey: `overspeed:${deviceId}:${at}`,
        });
        break;
      case 'alarm':
        out.push(alarmEvent(deviceId, f.alarm!, f.fixTime, fixPosition(f)));
        break;
    }
  }
}

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
 * The alarms of fixes that arrived late (older than fixes already evaluated): a panic pressed in a
 * tunnel and sent from the tracker's buffer must not be lost for arriving after newer fixes. Ignition
 * and overspeed are transitions in fix order and are not revised by a late fix.
 */
export async function lateFixAlarmEvents(trx: Db, fixes: Array<{ deviceId: number; fixTime: number }>): Promise<NewEvent[]> {
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
  return rows.map((r) => alarmEvent(r.device_id, r.alarm, r.fix_time, {
    lat: r.latitude, lng: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, fixTime: r.fix_time,
  }));
}

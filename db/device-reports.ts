import { sql, type RawBuilder } from 'kysely';
import { finiteOrNull, int4OrNull } from './column-values.ts';
import type { StoredReport } from '../domain/stored-rows.ts';

const num = (v: unknown) => (typeof v === 'number' ? finiteOrNull(v) : null);

interface DeviceReportSummary {
  deviceId: number;
  receivedAt: Date;
  /** The newest report's time: the state's telemetry follows it only when it is not older than the state's fix. */
  time: Date;
  attributes: Record<string, unknown>;
  power: number | null;
  battery: number | null;
  signalStrength: number | null;
  connectionType: string | null;
  ignition: boolean | null;
}

/** Per device, what its reports of one batch say, later reports winning. */
function summarise(reports: StoredReport[]): DeviceReportSummary[] {
  const byDevice = new Map<number, DeviceReportSummary>();
  const ordered = [...reports].sort((a, b) => reportTime(a).getTime() - reportTime(b).getTime());
  for (const r of ordered) {
    let s = byDevice.get(r.deviceId);
    if (!s) {
      s = { deviceId: r.deviceId, receivedAt: r.receivedAt, time: reportTime(r), attributes: {}, power: null, battery: null, signalStrength: null, connectionType: null, ignition: null };
      byDevice.set(r.deviceId, s);
    }
    if (r.receivedAt > s.receivedAt) s.receivedAt = r.receivedAt;
    s.time = reportTime(r);
    const a = r.attributes ?? {};
    Object.assign(s.attributes, a);
    s.power = num(a.power) ?? s.power;
    s.battery = num(a.battery) ?? s.battery;
    s.signalStrength = int4OrNull(num(r.signalStrength)) ?? s.signalStrength;
    s.connectionType = r.connectionType ?? s.connectionType;
    if (typeof a.ignition === 'boolean') s.ignition = a.ignition;
  }
  return [...byDevice.values()].sort((a, b) => a.deviceId - b.deviceId);
}

export const reportTime = (r: StoredReport): Date => r.time ?? r.receivedAt;

/**
 * Telemetry without a fix moves each device's last report time (never back) and, when it is not older
 * than the device's newest fix, its battery, power, signal, network type and ignition, with its
 * attributes merged into the latest state's. A heartbeat from a device that never had a fix still
 * counts as a report: every device has its latest-state row from its registration.
 */
export function applyReportsSql(reports: StoredReport[]): RawBuilder<unknown> {
  const s = summarise(reports);
  const current = sql`(d.fix_time IS NULL OR d.fix_time <= r.at)`;
  return sql`
    UPDATE device_states d SET
      last_report_at = greatest(d.last_report_at, r.received_at),
      power_voltage = CASE WHEN ${current} THEN coalesce(r.power, d.power_voltage) ELSE d.power_voltage END,
      backup_voltage = CASE WHEN ${current} THEN coalesce(r.battery, d.backup_voltage) ELSE d.backup_voltage END,
      signal_strength = CASE WHEN ${current} THEN coalesce(r.signal_strength, d.signal_strength) ELSE d.signal_strength END,
      connection_type = CASE WHEN ${current} THEN coalesce(r.connection_type, d.connection_type) ELSE d.connection_type END,
      ignition = CASE WHEN ${current} THEN coalesce(r.ignition, d.ignition) ELSE d.ignition END,
      attributes = CASE WHEN ${current} THEN (d.attributes::jsonb || r.attributes)::json ELSE d.attributes END
    FROM unnest(
      ${s.map((r) => r.deviceId)}::int[], ${s.map((r) => r.receivedAt.toISOString())}::timestamptz[],
      ${s.map((r) => r.time.toISOString())}::timestamptz[], ${s.map((r) => r.power)}::float8[], ${s.map((r) => r.battery)}::float8[],
      ${s.map((r) => r.signalStrength)}::int[], ${s.map((r) => r.connectionType)}::text[], ${s.map((r) => r.ignition)}::bool[],
      ${s.map((r) => JSON.stringify(r.attributes))}::jsonb[]
    ) AS r(device_id, received_at, at, power, battery, signal_strength, connection_type, ignition, attributes)
    WHERE d.device_id = r.device_id
  `;
}

/** Reports that carry something (an alarm, a battery level, a command's answer) are kept as rows for the event log. */
export function insertReportsSql(reports: StoredReport[]): RawBuilder<unknown> | undefined {
  const kept = reports.filter((r) => r.attributes && Object.keys(r.attributes).length > 0);
  if (kept.length === 0) return undefined;
  return sql`
    INSERT INTO device_reports (device_id, report_time, received_at, attributes)
    SELECT * FROM unnest(
      ${kept.map((r) => r.deviceId)}::int[], ${kept.map((r) => reportTime(r).toISOString())}::timestamptz[],
      ${kept.map((r) => r.receivedAt.toISOString())}::timestamptz[], ${kept.map((r) => JSON.stringify(r.attributes))}::jsonb[]
    )
  `;
}

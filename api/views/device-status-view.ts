import { z } from '@hono/zod-openapi';
import type { DeviceWithState } from '../../db/devices.ts';
import { classifyDeviceStatus, type DeviceStatusThresholds } from '../../domain/device-status.ts';
import { roundCoordinate } from '../../domain/display-precision.ts';
import { latitude, longitude, VOLT_PRECISION } from './rounded-fields.ts';

export const DeviceStatusSchema = z
  .object({
    deviceId: z.string().openapi({ description: 'IMEI', example: '356307042441013' }),
    name: z.string().openapi({ example: 'Truck 12' }),
    plates: z.string().openapi({ example: 'ABC-123-D' }),
    status: z.enum(['Moving', 'Stopped', 'Inactive', 'Off']),
    engineStatus: z.enum(['On', 'Off']),
    latitude: latitude('Latitude of the latest fix').nullable(),
    longitude: longitude('Longitude of the latest fix').nullable(),
    address: z.string().nullable().openapi({ description: 'Reverse-geocoded address of the latest valid fix, looked up within seconds after it was stored (GEOCODER); kept while the vehicle stays within GEOCODER_REUSE_DISTANCE_M of where it was looked up. Null: not looked up yet, none found, or GEOCODER=off', example: 'Avenida Paseo de la Reforma 222, Juárez, Ciudad de México, México' }),
    speedKmh: z.number().int().nullable(),
    heading: z.number().int().nullable().openapi({ description: 'Whole degrees clockwise from north, 0 to 359' }),
    odometerKm: z.number().nullable().openapi({ description: "The tracker's own odometer when its latest fix reports one above 0; else the server's, counted from the fixes from an installer's baseline (PUT /vehicles/{id}/accumulators) or from 0. Null: neither yet", example: 120_431.7 }),
    satellites: z.number().int().nullable(),
    powerVoltage: z.string().nullable().openapi({ description: `External power as text: ${VOLT_PRECISION}, then its unit`, example: '12.62 V' }),
    backupVoltage: z.string().nullable().openapi({ description: `Backup battery as text: ${VOLT_PRECISION}, then its unit`, example: '4.05 V' }),
    signalStrength: z.number().int().min(0).max(31).nullable().openapi({
      description: "GSM signal, 0 to 31 (a modem's CSQ), converted from the tracker protocol's own scale; the raw value is the fix's `rssi` attribute. Null until the tracker reported one",
      example: 23,
    }),
    connectionType: z.string().nullable().openapi({ description: '2G, 3G or 4G, as the tracker reports its network; null when it has not said', example: '4G' }),
    lastReportUtc: z.string().nullable().openapi({ format: 'date-time' }),
    minutesSinceReport: z.number().int().nullable(),
  })
  .openapi('DeviceStatus');

export type DeviceStatusView = z.infer<typeof DeviceStatusSchema>;

const voltage = (volts: number | null) => (volts === null ? null : `${volts.toFixed(2)} V`);
const roundOrNull = (value: number | null) => (value === null ? null : Math.round(value));
/** Whole degrees clockwise from north, 0 to 359: 360 is north again, and so is 359.6 once rounded. */
const compassDegrees = (heading: number) => ((Math.round(heading) % 360) + 360) % 360;

export function deviceStatusView(row: DeviceWithState, now: Date, thresholds: DeviceStatusThresholds): DeviceStatusView {
  const lastReport = row.last_report_at ?? null;
  return {
    deviceId: row.imei,
    name: row.name,
    plates: row.plates,
    status: classifyDeviceStatus({ lastReportAt: lastReport, speedKmh: row.speed_kmh, ignition: row.ignition }, now, thresholds),
    engineStatus: row.ignition ? 'On' : 'Off',
    latitude: roundCoordinate(row.latitude),
    longitude: roundCoordinate(row.longitude),
    address: row.address,
    speedKmh: roundOrNull(row.speed_kmh),
    heading: row.heading === null ? null : compassDegrees(row.heading),
    odometerKm: row.odometer_km === null ? null : Math.round(row.odometer_km * 10) / 10,
    satellites: row.satellites,
    powerVoltage: voltage(row.power_voltage),
    backupVoltage: voltage(row.backup_voltage),
    signalStrength: row.signal_strength,
    connectionType: row.connection_type,
    lastReportUtc: lastReport ? lastReport.toISOString() : null,
    minutesSinceReport: lastReport ? Math.max(0, Math.floor((now.getTime() - lastReport.getTime()) / 60_000)) : null,
  };
}

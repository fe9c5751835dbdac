import { z } from '@hono/zod-openapi';
import type { VehicleDetailRow, VehicleRow, VehicleStatus } from '../../db/vehicles.ts';
import { VEHICLE_STATUSES } from '../../db/vehicles.ts';
import { classifyDeviceStatus, type DeviceStatusThresholds } from '../../domain/device-status.ts';
import { roundCoordinate } from '../../domain/display-precision.ts';
import { latitude, longitude } from './rounded-fields.ts';

const imei = z.string().openapi({ description: 'The IMEI: the same identifier as `deviceId` of the device status endpoints', example: '356307042441013' });

/** The specification's vehicle record, field for field. */
export const VehicleSchema = z
  .object({
    id: imei,
    name: z.string().openapi({ example: 'Truck 12' }),
    status: z.enum(VEHICLE_STATUSES).openapi({ description: 'As GET /devices/status classifies it, in lower case' }),
    speed_kmh: z.number().int().nullable().openapi({ description: 'Whole km/h of the latest fix; null before a first fix, or when the tracker sent no speed', example: 42 }),
    location: z
      .object({ lat: latitude(), lng: longitude() })
      .nullable()
      .openapi({ description: 'The latest position; null before a first fix' }),
    updated_at: z.string().nullable().openapi({ format: 'date-time', description: 'ISO 8601 UTC time of the last report (lastReportUtc of GET /devices/status); null before the first', example: '2024-05-01T14:30:00.000Z' }),
  })
  .openapi('Vehicle');

export const VehicleDetailSchema = VehicleSchema.extend({
  plates: z.string().openapi({ example: 'ABC-123-D' }),
  protocol: z.string().nullable().openapi({ description: 'The tracker protocol it was registered with, if any', example: 'teltonika' }),
  speed_limit_kmh: z.number().nullable().openapi({ description: "The vehicle's own speed limit; null: its account's applies" }),
  fuel_tank_litres: z.number().nullable().openapi({ description: 'The fuel tank\'s capacity in litres, for fuel events in litres; null: unknown', example: 80 }),
  driver: z
    .object({
      id: z.number().int(),
      name: z.string(),
      identifier: z.string().openapi({ description: 'iButton / RFID / card number', example: '01A2B3C4D5E6F701' }),
      since: z.string().openapi({ format: 'date-time' }),
    })
    .nullable()
    .openapi({ description: 'The driver assigned now (by telemetry or by hand); null if none' }),
  unknown_driver_identifier: z.string().nullable().openapi({ description: 'The last driver identifier the tracker reported that no registered driver has' }),
  unknown_driver_seen_at: z.string().nullable().openapi({ format: 'date-time' }),
  user_ids: z.array(z.number().int()).openapi({ description: 'Users of the account granted the vehicle directly; its groups\' users see it too (docs/api/groups.md)' }),
  groups: z
    .array(z.object({ id: z.number().int(), name: z.string() }).openapi('VehicleGroupRef'))
    .openapi({ description: 'The groups holding the vehicle, by name; their users see it', example: [{ id: 3, name: 'North depot' }] }),
  odometer_km: z.number().nullable().openapi({ description: 'As odometerKm of GET /devices/status: the tracker\'s own, else the server\'s (GET /vehicles/{id}/accumulators)', example: 120_431.7 }),
  engine_hours: z.number().nullable().openapi({ description: 'Hours with the ignition on, counted by the server from an installer\'s baseline or from 0; null before the first fix', example: 3_512.25 }),
  address: z.string().nullable().openapi({ description: 'Reverse-geocoded address of the latest position, as `address` of GET /devices/status; null: not looked up yet, none found, or geocoding off' }),
}).openapi('VehicleDetail');

export type VehicleView = z.infer<typeof VehicleSchema>;
export type VehicleDetailView = z.infer<typeof VehicleDetailSchema>;

const tenths = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
const hundredths = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

/** The record of GET /vehicles; status and updated_at as GET /devices/status gives them at `now`. */
export function vehicleView(row: VehicleRow, now: Date, thresholds: DeviceStatusThresholds): VehicleView {
  const status = classifyDeviceStatus({ lastReportAt: row.last_report_at, speedKmh: row.speed_kmh, ignition: row.ignition }, now, thresholds);
  return {
    id: row.imei,
    name: row.name,
    status: status.toLowerCase() as VehicleStatus,
    speed_kmh: row.speed_kmh === null ? null : Math.round(row.speed_kmh),
    location: row.latitude === null || row.longitude === null ? null : { lat: roundCoordinate(row.latitude), lng: roundCoordinate(row.longitude) },
    updated_at: row.last_report_at ? row.last_report_at.toISOString() : null,
  };
}

export function vehicleDetailView(row: VehicleDetailRow, now: Date, thresholds: DeviceStatusThresholds): VehicleDetailView {
  return {
    ...vehicleView(row, now, thresholds),
    plates: row.plates,
    protocol: row.protocol,
    speed_limit_kmh: row.speed_limit_kmh,
    fuel_tank_litres: row.fuel_tank_litres,
    driver: row.driver_id === null ? null : { id: row.driver_id, name: row.driver_name!, identifier: row.driver_identifier!, since: row.driver_since!.toISOString() },
    unknown_driver_identifier: row.unknown_driver_identifier,
    unknown_driver_seen_at: row.unknown_driver_seen_at ? row.unknown_driver_seen_at.toISOString() : null,
    user_ids: row.user_ids,
    groups: row.groups,
    odometer_km: tenths(row.odometer_km),
    engine_hours: hundredths(row.engine_hours),
    address: row.address,
  };
}

import { z } from '@hono/zod-openapi';
import type { PositionRow } from '../../db/position-history.ts';
import { roundCoordinate, roundHeading, roundKm, roundMetres, roundSpeedKmh } from '../../domain/display-precision.ts';
import { isoInZone } from '../../domain/time/zoned-time.ts';
import { heading, kilometres, latitude, longitude, metres, speedKmh } from '../views/rounded-fields.ts';

/** The fields every format shows of a fix, after its time and coordinates. */
const measured = {
  speedKmh: speedKmh('Speed of the fix', 42.5).nullable(),
  heading: heading('Direction of travel', 90).nullable(),
  altitude: metres('Above sea level', 2240).nullable(),
  satellites: z.number().int().nullable().openapi({ example: 11 }),
  ignition: z.boolean().nullable(),
  odometerKm: kilometres("The tracker's total odometer (attributes.odometer / 1000); null when it sends none", 12345.678).nullable(),
  valid: z.boolean().openapi({ description: 'Whether the tracker had a GPS fix; an invalid fix repeats a stale or empty position' }),
  attributes: z.record(z.string(), z.unknown()).openapi({ description: 'Everything else the tracker reported with the fix, as decoded', example: { odometer: 12345678, rssi: 23 } }),
};

export const PositionSchema = z
  .object({
    fixTime: z.string().openapi({ format: 'date-time', description: "The tracker's time of the fix, ISO 8601 to the second with the user's timezone offset", example: '2024-05-01T08:30:05-06:00' }),
    lat: latitude(),
    lng: longitude(),
    ...measured,
  })
  .openapi('Position');

export const PositionPageSchema = z
  .object({
    data: z.array(PositionSchema),
    has_more: z.boolean(),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as cursor for the next page; null when has_more is false' }),
  })
  .openapi('PositionPage');

/** The properties a GeoJSON Point carries: the fix without its coordinates, its time in UTC. */
export const PositionPropertiesSchema = z
  .object({
    kind: z.literal('fix'),
    fixTime: z.string().openapi({ format: 'date-time', description: 'ISO 8601 UTC, to the millisecond', example: '2024-05-01T14:30:05.000Z' }),
    ...measured,
  })
  .openapi('PositionProperties');

export type Position = z.infer<typeof PositionSchema>;
export type PositionProperties = z.infer<typeof PositionPropertiesSchema>;

/** Decoders store the odometer in metres as `attributes.odometer`; anything but a number is no reading. */
export const odometerKm = (attributes: Record<string, unknown>) => (typeof attributes.odometer === 'number' ? roundKm(attributes.odometer / 1000) : null);

function measuredView(r: PositionRow) {
  const attributes = JSON.parse(r.attributes) as Record<string, unknown>;
  return {
    speedKmh: roundSpeedKmh(r.speed_kmh),
    heading: roundHeading(r.heading),
    altitude: roundMetres(r.altitude),
    satellites: r.satellites,
    ignition: r.ignition,
    odometerKm: odometerKm(attributes),
    valid: r.valid,
    attributes,
  };
}

export function positionView(r: PositionRow, timeZone: string): Position {
  return { fixTime: isoInZone(r.fix_time, timeZone), lat: roundCoordinate(r.latitude), lng: roundCoordinate(r.longitude), ...measuredView(r) };
}

export function positionProperties(r: PositionRow): PositionProperties {
  return { kind: 'fix', fixTime: r.fix_time.toISOString(), ...measuredView(r) };
}

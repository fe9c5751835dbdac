import { z } from '@hono/zod-openapi';
import type { AssignmentRecord, DriverRecord } from '../../db/drivers.ts';
import { driverRating, RATING_WINDOW_DAYS, type DrivingTotals } from '../../domain/drivers/driver-rating.ts';
import { metresToKm, roundMinutes } from '../../domain/display-precision.ts';
import { isoInZone } from '../../domain/time/zoned-time.ts';
import { kilometres, minutes } from './rounded-fields.ts';

const zonedTime = (description: string) =>
  z.string().openapi({ description: `${description}: ISO 8601 to the second in the user's timezone, with its offset`, example: '2024-05-01T08:02:10-06:00' });

const VehicleRef = z
  .object({
    id: z.string().openapi({ description: 'The IMEI', example: '356307042441013' }),
    name: z.string().openapi({ example: 'Truck 12' }),
  })
  .openapi('DriverVehicle');

export const DriverSchema = z
  .object({
    id: z.number().int().openapi({ example: 4 }),
    name: z.string().openapi({ example: 'Ana López' }),
    identifier: z.string().openapi({ description: 'The key the trackers read (iButton hex, RFID card, licence), upper case', example: '01C68011010000C7' }),
    phone: z.string().nullable().openapi({ example: '+52 55 1234 5678' }),
    currentVehicle: VehicleRef.nullable().openapi({ description: 'The vehicle assigned now; null if none, or if the key\'s user cannot see it' }),
    assignedSince: zonedTime('Since when').nullable(),
    assignmentSource: z.enum(['telemetry', 'manual']).nullable().openapi({ description: 'How the current assignment was made' }),
    rating: z.number().int().min(0).max(100).nullable().openapi({ description: `0 to 100 from the last ${RATING_WINDOW_DAYS} days of trips; null under 10 km driven (README, "Drivers")`, example: 87 }),
    createdAt: zonedTime('Registered'),
    updatedAt: zonedTime('Last changed'),
  })
  .openapi('Driver');

const AssignmentSchema = z
  .object({
    vehicle: VehicleRef,
    since: zonedTime('From'),
    until: zonedTime('To').nullable().openapi({ description: 'null: the current assignment' }),
    source: z.enum(['telemetry', 'manual']),
  })
  .openapi('DriverAssignment');

export const DriverDetailSchema = DriverSchema.extend({
  ratingBasis: z
    .object({
      days: z.number().int().openapi({ example: RATING_WINDOW_DAYS }),
      distanceKm: kilometres('Distance driven', 1234.567),
      overspeedMinutes: minutes('Time above the speed limit', 12.5),
      harshEvents: z.number().int().openapi({ description: 'Harsh accelerations, brakings and cornerings in these trips: worked out from the fixes and the trackers\' own alarms, each manoeuvre once', example: 3 }),
      idleMinutes: minutes('Time with the ignition on and not moving', 95),
    })
    .openapi({ description: 'What the rating was computed from: the driver\'s trips that started in the window' }),
  assignments: z.array(AssignmentSchema).openapi({ description: 'The newest 50 assignments on vehicles the key\'s user can see, newest first' }),
}).openapi('DriverDetail');

export type DriverView = z.infer<typeof DriverSchema>;
export type DriverDetailView = z.infer<typeof DriverDetailSchema>;

export function driverView(d: DriverRecord, totals: DrivingTotals | undefined, timeZone: string): DriverView {
  return {
    id: d.id,
    name: d.name,
    identifier: d.identifier,
    phone: d.phone,
    currentVehicle: d.vehicle ? { id: d.vehicle.imei, name: d.vehicle.name } : null,
    assignedSince: d.vehicle ? isoInZone(d.vehicle.since, timeZone) : null,
    assignmentSource: d.vehicle?.source ?? null,
    rating: totals ? driverRating(totals) : null,
    createdAt: isoInZone(d.createdAt, timeZone),
    updatedAt: isoInZone(d.updatedAt, timeZone),
  };
}

export function driverDetailView(d: DriverRecord, totals: DrivingTotals, assignments: AssignmentRecord[], timeZone: string): DriverDetailView {
  return {
    ...driverView(d, totals, timeZone),
    ratingBasis: {
      days: RATING_WINDOW_DAYS,
      distanceKm: metresToKm(totals.distanceM),
      overspeedMinutes: roundMinutes(totals.overspeedS / 60),
      harshEvents: totals.harshEvents,
      idleMinutes: roundMinutes(totals.idleS / 60),
    },
    assignments: assignments.map((a) => ({
      vehicle: { id: a.vehicle.imei, name: a.vehicle.name },
      since: isoInZone(a.since, timeZone),
      until: a.until ? isoInZone(a.until, timeZone) : null,
      source: a.source,
    })),
  };
}

import { z } from '@hono/zod-openapi';
import type { StopRow, TripRow, VehicleTotals } from '../../db/trip-report.ts';
import { metresToKm, roundCoordinate, roundSpeedKmh } from '../../domain/display-precision.ts';
import { isoInZone } from '../../domain/time/zoned-time.ts';
import { tripKpis } from '../../domain/trips/trip-kpis.ts';
import { kilometres, LatLngSchema, speedKmh } from './rounded-fields.ts';

export const TRIP_REPORT_SECTIONS = ['trips', 'stops', 'summary'] as const;

const time = (example: string) =>
  z.string().openapi({ description: 'ISO 8601 to the second in the user timezone, with its offset', example, format: 'date-time' });
const position = LatLngSchema;
const seconds = (description: string) => z.number().int().openapi({ description: `${description}, whole seconds` });

const TripSchema = z
  .object({
    startTime: time('2024-05-01T08:02:10+02:00'),
    endTime: time('2024-05-01T08:41:50+02:00').nullable().openapi({ description: 'Null while the trip is in progress (a vehicle silent for longer than TRIP_MAX_GAP_S is not: its trip ended at its last fix)' }),
    durationS: seconds('End minus start; in progress, up to the last fix so far'),
    startPosition: position,
    endPosition: position.openapi({ description: 'Where it ended; in progress, the last fix so far' }),
    startGeofence: z.string().nullable().openapi({ description: 'The geofence the vehicle was in at the start (the smallest, if several)' }),
    endGeofence: z.string().nullable(),
    startAddress: z.string().nullable().openapi({ description: 'Reverse-geocoded address of the start, looked up within seconds after the trip began; null: not yet, none found, or geocoding off' }),
    endAddress: z.string().nullable().openapi({ description: 'Reverse-geocoded address of the end, looked up once the trip has ended; null while in progress, not yet, none found, or geocoding off' }),
    distanceKm: kilometres("By the tracker's odometer when it sends one at both ends, else by the server's (the vehicle's odometerKm, filtered against a halted vehicle's GPS scatter); for trips begun before the server kept one, the sum of great-circle legs between valid fixes"),
    drivingS: seconds('Time moving'),
    idleS: seconds('Time with the ignition on and not moving'),
    maxSpeedKmh: speedKmh('The fastest valid fix'),
    averageSpeedKmh: speedKmh('Distance over driving time; null without driving time').nullable(),
    overspeedS: seconds('Time above the vehicle\'s speed limit'),
    harshEvents: z.number().int().openapi({ description: 'Harsh accelerations, brakings and cornerings during the trip: worked out from the fixes and the tracker\'s own alarms, each manoeuvre once (the vehicle.harsh.* events)' }),
    driver: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  })
  .openapi('Trip');

const StopSchema = z
  .object({
    startTime: time('2024-05-01T08:41:50+02:00'),
    endTime: time('2024-05-01T09:30:00+02:00').nullable().openapi({ description: 'Null while the vehicle is still there' }),
    durationS: seconds('End minus start; still stopped, up to the last fix so far'),
    position: position,
    geofence: z.string().nullable(),
    address: z.string().nullable().openapi({ description: 'Reverse-geocoded address of the stop, looked up within seconds after it began; null: not yet, none found, or geocoding off' }),
    engineIdleS: seconds('Time with the ignition on'),
  })
  .openapi('Stop');

const SummarySchema = z
  .object({
    tripCount: z.number().int(),
    distanceKm: kilometres('Distance of the trips'),
    drivingS: seconds('Driving time of the trips'),
    idleS: seconds('Ignition on and not moving: in the trips and at the stops'),
    overspeedS: seconds('Time above the speed limit'),
    maxSpeedKmh: speedKmh('The fastest valid fix of the trips; null without trips').nullable(),
    utilisation: z.number().openapi({ description: 'Driving time over the requested range (for the fleet: over the range times the vehicles), 0–1, 4 decimals' }),
  })
  .openapi('TripSummary');

export const TripReportSchema = z
  .object({
    range: z.object({ from: time('2024-05-01T00:00:00+02:00'), to: time('2024-05-01T23:59:59+02:00') }),
    deviceCount: z.number().int(),
    included: z.array(z.enum(TRIP_REPORT_SECTIONS)),
    vehicles: z.array(
      z.object({
        deviceId: z.string().openapi({ description: 'IMEI' }),
        deviceName: z.string(),
        summary: SummarySchema.optional(),
        trips: z.array(TripSchema).optional(),
        stops: z.array(StopSchema).optional(),
      }),
    ),
    fleet: SummarySchema.optional().openapi({ description: 'With summary: the totals over every vehicle of the report' }),
  })
  .openapi('TripReport');

type Trip = z.infer<typeof TripSchema>;
type Stop = z.infer<typeof StopSchema>;
type Summary = z.infer<typeof SummarySchema>;

const wholeSeconds = (s: number) => Math.round(s);
const at = (lat: number, lng: number) => ({ lat: roundCoordinate(lat), lng: roundCoordinate(lng) });

/**
 * A trip in progress whose last fix is older than the maximum gap is shown ended there: the engine's
 * gap rule will end it at exactly that fix when the tracker next reports, and a tracker that sleeps
 * when parked may not report for days.
 */
export function tripView(t: TripRow, timeZone: string, now: number, maxGapS: number): Trip {
  const ended = t.end_time ?? (now - t.last_fix_time.getTime() > maxGapS * 1000 ? t.last_fix_time : null);
  const end = ended ?? t.last_fix_time;
  return {
    startTime: isoInZone(t.start_time, timeZone),
    endTime: ended ? isoInZone(ended, timeZone) : null,
    durationS: wholeSeconds((end.getTime() - t.start_time.getTime()) / 1000),
    startPosition: at(t.start_lat, t.start_lng),
    endPosition: at(t.end_lat, t.end_lng),
    startGeofence: t.start_geofence,
    endGeofence: t.end_geofence,
    startAddress: t.start_address,
    endAddress: t.end_address,
    distanceKm: metresToKm(t.distance_m),
    drivingS: wholeSeconds(t.driving_s),
    idleS: wholeSeconds(t.idle_s),
    maxSpeedKmh: roundSpeedKmh(t.max_speed_kmh),
    averageSpeedKmh: t.driving_s > 0 ? roundSpeedKmh((t.distance_m / t.driving_s) * 3.6) : null,
    overspeedS: wholeSeconds(t.overspeed_s),
    harshEvents: t.harsh_events,
    driver: t.driver_id !== null && t.driver_name !== null ? { id: t.driver_id, name: t.driver_name } : null,
  };
}

export function stopView(s: StopRow, timeZone: string): Stop {
  const end = s.end_time ?? s.last_fix_time;
  return {
    startTime: isoInZone(s.start_time, timeZone),
    endTime: s.end_time ? isoInZone(s.end_time, timeZone) : null,
    durationS: wholeSeconds((end.getTime() - s.start_time.getTime()) / 1000),
    position: at(s.lat, s.lng),
    geofence: s.geofence,
    address: s.address,
    engineIdleS: wholeSeconds(s.engine_idle_s),
  };
}

/** One vehicle's KPIs, or with several, the fleet's (domain/trips/trip-kpis.ts). */
export function summaryView(totals: readonly VehicleTotals[], rangeS: number): Summary {
  return tripKpis(totals, rangeS);
}

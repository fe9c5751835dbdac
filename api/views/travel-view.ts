import { z } from '@hono/zod-openapi';
import { travelStatusName, type TravelRecord } from '../../db/travels.ts';
import type { TravelWaypoint } from '../../db/schema.ts';
import { timeObject } from '../../domain/time/zoned-time.ts';

export const TimeObjectSchema = z
  .object({
    local: z.string().openapi({ example: '01/05/2024 08:00' }),
    utc: z.string().openapi({ example: '01/05/2024 14:00' }),
  })
  .openapi('TimeObject');

/**
 * A time object or null, as a union: `.nullable()` on a registered schema is rendered as
 * `allOf: [{$ref}, {type: [object, null]}]`, which no null satisfies.
 */
const nullableTime = (description: string) => z.union([TimeObjectSchema, z.null()]).openapi({ description });

const STATUS = z.enum(['Scheduled', 'In progress', 'Completed', 'Cancelled']);

export const WaypointSchema = z
  .object({
    order: z.number().int(),
    geofence: z.string().openapi({ example: 'Warehouse North' }),
    status: z.enum(['Completed', 'Pending', 'Cancelled']),
    expectedArrival: TimeObjectSchema,
    arrivedAt: nullableTime('null until the vehicle reaches the waypoint'),
    estimatedArrival: nullableTime('Live ETA of the waypoint; null until the engine computes one, and once the waypoint is reached'),
    delayMinutes: z.number().int().nullable().openapi({ description: 'Positive late, negative early' }),
    timing: z.string().openapi({ example: '+7 min late (est.)' }),
  })
  .openapi('Waypoint');

export const TravelSchema = z
  .object({
    travelId: z.number().int(),
    vehicle: z.string(),
    status: STATUS,
    timezone: z.string().openapi({ example: 'America/Mexico_City' }),
    progress: z.number(),
    totalWaypoints: z.number().int(),
    completedWaypoints: z.number().int(),
    startTime: TimeObjectSchema,
    waypoints: z.array(WaypointSchema),
  })
  .openapi('Travel');

export const TravelSummarySchema = z
  .object({
    travelId: z.number().int(),
    vehicle: z.string(),
    status: STATUS,
    progress: z.number(),
    totalWaypoints: z.number().int(),
    completedWaypoints: z.number().int(),
    nextWaypoint: z.string().nullable(),
    delayMinutes: z.number().int().nullable(),
    timing: z.string(),
    startTime: TimeObjectSchema,
  })
  .openapi('TravelSummary');

type Waypoint = z.infer<typeof WaypointSchema>;
type Status = z.infer<typeof STATUS>;

const WAYPOINT_STATUS = { pending: 'Pending', completed: 'Completed', cancelled: 'Cancelled' } as const;

/** Delay and its label: actual for an arrived waypoint, estimated for a pending one with a live ETA. */
export function waypointTiming(w: TravelWaypoint, toleranceMinutes: number): { delayMinutes: number | null; timing: string } {
  const reference = w.status === 'completed' ? w.arrived_at : w.status === 'pending' ? w.estimated_arrival : null;
  if (!reference) return { delayMinutes: null, timing: '' };
  const delay = Math.round((reference.getTime() - w.expected_arrival.getTime()) / 60_000);
  if (Math.abs(delay) <= toleranceMinutes) return { delayMinutes: delay, timing: 'On time' };
  if (delay < 0) return { delayMinutes: delay, timing: `${-delay} min early` };
  return { delayMinutes: delay, timing: w.status === 'completed' ? `+${delay} min late` : `+${delay} min late (est.)` };
}

function progressOf(waypoints: TravelWaypoint[]) {
  const completed = waypoints.filter((w) => w.status === 'completed').length;
  const total = waypoints.length;
  return { completed, total, progress: total === 0 ? 0 : Math.round((completed / total) * 1000) / 10 };
}

export function travelView(record: TravelRecord, timezone: string, toleranceMinutes: number): z.infer<typeof TravelSchema> {
  const { travel, waypoints } = record;
  const { completed, total, progress } = progressOf(waypoints);
  return {
    travelId: travel.id,
    vehicle: record.vehicleName,
    status: travelStatusName(travel.status) as Status,
    timezone,
    progress,
    totalWaypoints: total,
    completedWaypoints: completed,
    startTime: timeObject(travel.start_time, timezone),
    waypoints: waypoints.map(
      (w): Waypoint => ({
        order: w.seq,
        geofence: w.geofence_name,
        status: WAYPOINT_STATUS[w.status],
        expectedArrival: timeObject(w.expected_arrival, timezone),
        arrivedAt: w.arrived_at ? timeObject(w.arrived_at, timezone) : null,
        estimatedArrival: w.estimated_arrival ? timeObject(w.estimated_arrival, timezone) : null,
        ...waypointTiming(w, toleranceMinutes),
      }),
    ),
  };
}

export function travelSummaryView(record: TravelRecord, timezone: string, toleranceMinutes: number): z.infer<typeof TravelSummarySchema> {
  const { travel, waypoints } = record;
  const { completed, total, progress } = progressOf(waypoints);
  const next = waypoints.find((w) => w.status === 'pending');
  return {
    travelId: travel.id,
    vehicle: record.vehicleName,
    status: travelStatusName(travel.status) as Status,
    progress,
    totalWaypoints: total,
    completedWaypoints: completed,
    nextWaypoint: next?.geofence_name ?? null,
    ...(next ? waypointTiming(next, toleranceMinutes) : { delayMinutes: null, timing: '' }),
    startTime: timeObject(travel.start_time, timezone),
  };
}

import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { activeTravels, cancelTravel, createTravel, visibleTravel } from '../../db/travels.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { parseDisplayTime } from '../../domain/time/zoned-time.ts';
import { TravelSchema, TravelSummarySchema, travelSummaryView, travelView } from '../views/travel-view.ts';

export const MAX_WAYPOINTS = 100;

const localTime = (example: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? undefined : 'Invalid date format') }).openapi({
    description: 'dd/MM/yyyy HH:mm in the user timezone',
    example,
  });

const CreateTravelBody = z
  .object({
    vehicle: z.string().min(1).max(200).openapi({ description: 'Exact registered vehicle name', example: 'Truck 12' }),
    startTime: localTime('01/05/2024 08:00'),
    waypoints: z
      .array(
        z.object({
          geofence: z.string().min(1).max(200).openapi({ description: 'Exact, case-sensitive geofence name', example: 'Warehouse North' }),
          expectedArrival: localTime('01/05/2024 09:30'),
        }),
      )
      .min(1, 'waypoints must contain at least one destination')
      .max(MAX_WAYPOINTS, `waypoints may contain at most ${MAX_WAYPOINTS} destinations`),
  })
  .openapi('CreateTravel');

const travelId = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, 'travel id must be a positive integer')
    .openapi({ param: { name: 'id', in: 'path' }, example: '42' }),
});

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const create = createRoute({
  method: 'post',
  path: '/travels',
  tags: ['Travels'],
  summary: 'Create a travel: a route from the vehicle\'s position through named geofences',
  description:
    'Waypoint 1 is always `Current position`, the vehicle\'s position at the start time. Each expectedArrival must be no earlier than startTime and than the waypoint before it.',
  middleware: [requirePermission('travels:write')] as const,
  request: { body: { required: true, content: json(CreateTravelBody) } },
  responses: {
    200: { description: 'The travel, Scheduled', content: json(envelopeSchema(TravelSchema, 'TravelResponse')) },
    ...errorResponses(
      [400, 'Vehicle not found, Geofence not found, Active travel exists, Invalid date format, or an invalid body'],
      [413, 'Body too large'],
      [415, 'Body not sent as application/json'],
    ),
  },
});

const list = createRoute({
  method: 'get',
  path: '/travels',
  tags: ['Travels'],
  summary: 'Active (Scheduled and In progress) travels, earliest start first',
  middleware: [requirePermission('travels:read')] as const,
  responses: {
    200: { description: 'Active travels', content: json(envelopeSchema(z.array(TravelSummarySchema), 'TravelSummaryList')) },
    ...errorResponses(),
  },
});

const get = createRoute({
  method: 'get',
  path: '/travels/{id}',
  tags: ['Travels'],
  summary: 'Full status of a travel, with live ETAs',
  middleware: [requirePermission('travels:read')] as const,
  request: { params: travelId },
  responses: {
    200: { description: 'The travel', content: json(envelopeSchema(TravelSchema, 'TravelDetail')) },
    ...errorResponses([400, 'Invalid id'], [404, 'Travel not found']),
  },
});

const CancelledSchema = z
  .object({ travelId: z.number().int(), status: z.literal('Cancelled'), message: z.string().openapi({ example: 'Travel 42 cancelled' }) })
  .openapi('TravelCancelled');

const cancel = createRoute({
  method: 'delete',
  path: '/travels/{id}',
  tags: ['Travels'],
  summary: 'Cancel a Scheduled or In progress travel',
  description: 'Every pending waypoint becomes Cancelled. A Completed or Cancelled travel cannot be cancelled (400).',
  middleware: [requirePermission('travels:write')] as const,
  request: { params: travelId },
  responses: {
    200: { description: 'Cancelled', content: json(envelopeSchema(CancelledSchema, 'TravelCancelledResponse')) },
    // The limit on bodies holds for every request, so even this operation, which reads none, can answer 413.
    ...errorResponses([400, 'The travel is Completed or Cancelled, or the id is invalid'], [404, 'Travel not found'], [413, 'Body too large']),
  },
});

function localInstant(text: string, timezone: string): Date {
  const instant = parseDisplayTime(text, timezone);
  if (!instant) throw new ApiError(400, 'Invalid date format');
  return instant;
}

export function travelRoutes({ db, config, log, travelSchedule }: RouteDeps) {
  // The travel is committed either way: a schedule that cannot be written now is caught up by the
  // engine's periodic start of due travels.
  const tellEngine = (what: string, work: Promise<void> | undefined) =>
    work?.catch((error: Error) => log.warn(`could not ${what}; the engine's catch-up will`, { error: error.message }));
  const app = new OpenAPIHono<AppEnv>();
  const tolerance = config.onTimeToleranceMinutes;

  app.openapi(create, async (c) => {
    const { scope, timezone } = c.get('principal');
    const body = c.req.valid('json');
    const startTime = localInstant(body.startTime, timezone);
    const waypoints = body.waypoints.map((w) => ({ geofenceName: w.geofence, expectedArrival: localInstant(w.expectedArrival, timezone) }));
    let previous = startTime;
    waypoints.forEach((w, i) => {
      if (w.expectedArrival < previous) {
        const before = i === 0 ? 'startTime' : `the expectedArrival of waypoint ${i + 1}`;
        throw new ApiError(400, `The expectedArrival of waypoint ${i + 2} (${w.geofenceName}) is earlier than ${before}`);
      }
      previous = w.expectedArrival;
    });
    const record = await createTravel(db, scope, { vehicleName: body.vehicle, startTime, waypoints });
    await tellEngine('schedule the travel start', travelSchedule?.scheduled(record.travel.id, record.travel.start_time, c.get('requestId')));
    return c.json(envelope(travelView(record, timezone, tolerance)), 200);
  });

  app.openapi(list, async (c) => {
    const { scope, timezone } = c.get('principal');
    const records = await activeTravels(db, scope);
    return c.json(envelope(records.map((r) => travelSummaryView(r, timezone, tolerance))), 200);
  });

  app.openapi(get, async (c) => {
    const { scope, timezone } = c.get('principal');
    const record = await visibleTravel(db, scope, Number(c.req.valid('param').id));
    if (!record) throw new ApiError(404, 'Travel not found');
    return c.json(envelope(travelView(record, timezone, tolerance)), 200);
  });

  app.openapi(cancel, async (c) => {
    const travel = await cancelTravel(db, c.get('principal').scope, Number(c.req.valid('param').id));
    await tellEngine('remove the travel start', travelSchedule?.cancelled(travel.id));
    return c.json(envelope({ travelId: travel.id, status: 'Cancelled' as const, message: `Travel ${travel.id} cancelled` }), 200);
  });
  return app;
}

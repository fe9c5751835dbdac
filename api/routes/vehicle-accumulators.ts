import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction } from '../../db/database.ts';
import { setVehicleBaseline, visibleVehicleAccumulators } from '../../db/vehicle-accumulators.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { VehicleAccumulatorsSchema, vehicleAccumulatorsView } from '../views/vehicle-accumulators-view.ts';

const NOT_FOUND = 'Vehicle not found or no access';
/** Beyond any vehicle's life: a typo of a few digits too many is refused rather than stored. */
const MAX_ODOMETER_KM = 10_000_000;
const MAX_ENGINE_HOURS = 1_000_000;

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z
  .string()
  .min(1)
  .max(64)
  .refine((s) => !s.includes('\u0000'), 'id must not contain NUL characters')
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The IMEI', example: '356307042441013' });

const BaselineBody = z
  .object({
    odometerKm: z
      .number()
      .min(0, 'odometerKm must be 0 or more')
      .max(MAX_ODOMETER_KM, `odometerKm must be at most ${MAX_ODOMETER_KM}`)
      .optional()
      .openapi({ description: 'The vehicle\'s odometer now, km', example: 120_000 }),
    engineHours: z
      .number()
      .min(0, 'engineHours must be 0 or more')
      .max(MAX_ENGINE_HOURS, `engineHours must be at most ${MAX_ENGINE_HOURS}`)
      .optional()
      .openapi({ description: 'The vehicle\'s engine hours now', example: 3_500 }),
  })
  .strict()
  .refine((b) => b.odometerKm !== undefined || b.engineHours !== undefined, 'give odometerKm, engineHours or both')
  .openapi('VehicleAccumulatorsBaseline');

const DESCRIPTION = [
  'The server keeps an odometer and engine hours for every vehicle, counted from its fixes in fix-time order: the distance between valid fixes (a parked vehicle\'s GPS scatter is not counted) and the time with the ignition on. A fix resent or replayed adds nothing; a fix older than the vehicle\'s newest evaluated one (a late fix) adds nothing either (docs/engine.md, "Odometer and engine hours").',
  '`odometerKm` of GET /devices/status is the tracker\'s own odometer when its latest fix reports one above 0, else the server\'s.',
].join('\n\n');

const routes = {
  get: createRoute({
    method: 'get', path: '/vehicles/{id}/accumulators', tags: ['Vehicles'], summary: 'A vehicle\'s odometer and engine hours', description: DESCRIPTION,
    middleware: [requirePermission('vehicles:read')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The vehicle\'s odometer and engine hours', content: json(envelopeSchema(VehicleAccumulatorsSchema, 'VehicleAccumulatorsResponse')) },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]),
    },
  }),
  put: createRoute({
    method: 'put', path: '/vehicles/{id}/accumulators', tags: ['Vehicles'], summary: 'Set a vehicle\'s odometer and engine hours as they are now',
    description: 'As an installer does when a tracker goes into a vehicle that has driven already: from now on the server\'s odometer is `odometerKm` plus the distance counted after this call, and its engine hours `engineHours` plus the time counted after it. A figure left out keeps its baseline. Audited as `vehicle.accumulators_set`.',
    middleware: [requirePermission('vehicles:write')] as const,
    request: { params: z.object({ id }), body: { content: json(BaselineBody), required: true } },
    responses: {
      200: { description: 'The vehicle\'s odometer and engine hours', content: json(envelopeSchema(VehicleAccumulatorsSchema, 'VehicleAccumulatorsSet')) },
      ...errorResponses([400, 'Invalid figure, none given, or an unknown field'], [404, NOT_FOUND], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
};

export function vehicleAccumulatorRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.get, async (c) => {
    const found = await visibleVehicleAccumulators(db, c.get('principal').scope, c.req.valid('param').id);
    if (!found) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(vehicleAccumulatorsView(found)), 200);
  });

  app.openapi(routes.put, async (c) => {
    const imei = c.req.valid('param').id;
    const body = c.req.valid('json');
    const set = await inTransaction(db, async (trx) => {
      const after = await setVehicleBaseline(trx, c.get('principal').scope, imei, body);
      if (after) await recordAudit(trx, auditActor(c), { action: 'vehicle.accumulators_set', targetType: 'vehicle', targetId: imei, details: body });
      return after;
    });
    if (!set) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(vehicleAccumulatorsView(set)), 200);
  });

  return app;
}

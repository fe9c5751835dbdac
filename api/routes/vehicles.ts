import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { deleteVehicle, registerVehicle, updateVehicle, VEHICLE_STATUSES, vehiclePage, visibleVehicle, type VehicleRow, type VehicleStatus } from '../../db/vehicles.ts';
import { TRACKER_PROTOCOLS } from '../../ingest/protocol-catalog.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { MAX_ANSWERS_PER_READ } from '../fresh-reads/latest-state-reads.ts';
import { vehicleListPage } from '../fresh-reads/vehicle-list-page.ts';
import { decodeNameCursor, encodeNameCursor, type CursorContext } from '../pagination/name-cursor.ts';
import { commaList } from '../query/comma-list.ts';
import type { RouteDeps } from '../route-deps.ts';
import { VehicleDetailSchema, VehicleSchema, vehicleDetailView, vehicleView } from '../views/vehicle-view.ts';

const NOT_FOUND = 'Vehicle not found or no access';
const utf8 = new TextEncoder();
const IMEI = /^[0-9A-Za-z._-]{1,32}$/;
const MAX_LIMIT = 500;
const MAX_USERS = 1_000;
/** The protocols a vehicle may be registered with (the console offers them in its form). */
export const PROTOCOLS: [string, ...string[]] = ['osmand', ...TRACKER_PROTOCOLS.map((p) => p.protocol.name)];

const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z
  .string()
  .min(1)
  .max(64)
  .refine(noNul, 'id must not contain NUL characters')
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The IMEI', example: '356307042441013' });

const name = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(200, 'name must be at most 200 characters')
  .refine(noNul, 'name must not contain NUL characters')
  .openapi({ description: 'Unique among the account\'s vehicles of the key\'s mode; trimmed, 1 to 200 characters. Travels name vehicles by it.', example: 'Truck 12' });
const plates = z.string().max(40, 'plates must be at most 40 characters').refine(noNul, 'plates must not contain NUL characters').openapi({ example: 'ABC-123-D' });
const protocol = z.enum(PROTOCOLS).nullable().openapi({ description: 'The tracker\'s protocol, for the record (trackers are recognised by IMEI on any listener)', example: 'teltonika' });
const speedLimit = z
  .number()
  .gt(0, 'speed_limit_kmh must be above 0')
  .max(1000, 'speed_limit_kmh must be at most 1000')
  .nullable()
  .openapi({ description: 'km/h, above 0 and at most 1000; null: the account\'s limit applies', example: 90 });
const fuelTank = z
  .number()
  .gt(0, 'fuel_tank_litres must be above 0')
  .max(10_000, 'fuel_tank_litres must be at most 10000')
  .nullable()
  .openapi({ description: 'The fuel tank\'s capacity in litres, above 0 and at most 10000: fuel events give their amount in litres, and a tracker reporting litres only gets fuel events (docs/engine.md, "Fuel"); null: unknown', example: 80 });
const userIds = z
  .array(z.number().int().min(1).max(2_147_483_647))
  .max(MAX_USERS)
  .openapi({ description: 'Users of the account who may see the vehicle, besides the key\'s own user (who always may)', example: [4, 9] });

const CreateBody = z
  .object({
    imei: z
      .string()
      .regex(IMEI, 'imei must be 1 to 32 letters, digits, dots, dashes or underscores')
      .openapi({ description: 'The identifier the tracker logs in with; unique across the server', example: '356307042441013' }),
    name,
    plates: plates.optional(),
    protocol: protocol.optional(),
    speed_limit_kmh: speedLimit.optional(),
    fuel_tank_litres: fuelTank.optional(),
    user_ids: userIds.optional(),
  })
  .strict()
  .openapi('VehicleCreate');

const PatchBody = z
  .object({
    name: name.optional(),
    plates: plates.optional(),
    protocol: protocol.optional(),
    speed_limit_kmh: speedLimit.optional(),
    fuel_tank_litres: fuelTank.optional(),
    user_ids: userIds.optional().openapi({ description: 'Replaces who may see the vehicle; the key\'s own user is always kept' }),
  })
  .strict()
  .openapi('VehicleUpdate');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).openapi({ description: `1 to ${MAX_LIMIT}, default 50` }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page, with the same status and q' }),
  status: z.string().max(100).optional().openapi({ description: 'Comma-separated: any of moving, stopped, off, inactive', example: 'moving,stopped' }),
  q: z
    .string()
    .max(100, 'q must be at most 100 characters')
    .refine(noNul, 'q must not contain NUL characters')
    .optional()
    .openapi({ description: 'Case-insensitive substring of the name or the plates' }),
});

const VehiclePage = z
  .object({ data: z.array(VehicleSchema), has_more: z.boolean(), next_cursor: z.string().nullable().openapi({ description: 'null when has_more is false' }) })
  .openapi('VehiclePage');

const LIST_DESCRIPTION = [
  'The vehicles the key\'s user may see, of the key\'s mode, ordered by name, then id (IMEI). `status` and `updated_at` are what GET /devices/status says at the same moment (`updated_at` is its lastReportUtc). Read at most every 400 ms per caller and shared by every request meanwhile, the list is never older than one second; a write through the API shows in the next answer.',
  'Keyset pages: a page starts after the last (name, id) of the one before, so paging while vehicles are added, renamed or deleted never returns one twice nor skips one that existed throughout under the same name (a vehicle renamed meanwhile is shown at its new place, which may be on a later page again). The cursor holds no server state: any API process continues it. A cursor damaged or edited, of another list or another user or mode, or sent with other `status` or `q` is refused with 400.',
].join('\n\n');

const routes = {
  list: createRoute({
    method: 'get', path: '/vehicles', tags: ['Vehicles'], summary: 'A page of vehicles with their current position', description: LIST_DESCRIPTION,
    middleware: [requirePermission('vehicles:read')] as const,
    request: { query: ListQuery },
    responses: { 200: { description: 'A page of vehicles', content: json(VehiclePage) }, ...errorResponses([400, 'Invalid limit, status, q or cursor']) },
  }),
  get: createRoute({
    method: 'get', path: '/vehicles/{id}', tags: ['Vehicles'], summary: 'One vehicle with its plates, protocol, speed limit and current driver',
    middleware: [requirePermission('vehicles:read')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The vehicle', content: json(envelopeSchema(VehicleDetailSchema, 'VehicleResponse')) },
      ...errorResponses([400, 'Invalid id: longer than 64 characters, or holding a NUL'], [404, NOT_FOUND]),
    },
  }),
  create: createRoute({
    method: 'post', path: '/vehicles', tags: ['Vehicles'], summary: 'Register a tracker as a vehicle',
    description: 'The vehicle belongs to the key\'s account and mode; the key\'s user sees it, and so do the `user_ids` given. A tracker with this IMEI is accepted by the tracker listeners from its next login, without a restart.',
    middleware: [requirePermission('vehicles:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The vehicle', content: json(envelopeSchema(VehicleDetailSchema, 'VehicleCreated')) },
      ...errorResponses(
        [400, 'Invalid field, an unknown field, or a user of another account'],
        [409, 'The IMEI is registered already (on this server), or the name is taken in the account and mode'],
        [413, 'Body too large'],
        [415, 'Not JSON'],
      ),
    },
  }),
  patch: createRoute({
    method: 'patch', path: '/vehicles/{id}', tags: ['Vehicles'], summary: 'Change a vehicle\'s name, plates, protocol, speed limit or users',
    description: 'Only the fields given change. The IMEI cannot change: register the new tracker and delete the old vehicle.',
    middleware: [requirePermission('vehicles:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The vehicle', content: json(envelopeSchema(VehicleDetailSchema, 'VehicleUpdated')) },
      ...errorResponses([400, 'Invalid field, an unknown field, or a user of another account'], [404, NOT_FOUND], [409, 'Another vehicle has this name'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/vehicles/{id}', tags: ['Vehicles'], summary: 'Delete a vehicle and its history',
    description: 'Its positions, travels, visits, trips and stops go with it; the event log keeps its events. Refused with 409 while it has a Scheduled or In progress travel.',
    middleware: [requirePermission('vehicles:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.string(), deleted: z.literal(true) }), 'VehicleDeleted')) },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND], [409, 'The vehicle has an active travel']),
    },
  }),
};

function statusFilter(raw: string | undefined): VehicleStatus[] | undefined {
  const names = commaList(raw, 'status')?.map((s) => s.toLowerCase());
  if (!names) return undefined;
  const unknown = names.filter((s) => !(VEHICLE_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new ApiError(400, `status: unknown value ${unknown.map((s) => `"${s}"`).join(', ')}; use ${VEHICLE_STATUSES.join(', ')}`);
  return [...new Set(names)] as VehicleStatus[];
}

export function vehicleRoutes({ db, staleDb, config, latestState }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const thresholds = config.deviceStatus;

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const statuses = statusFilter(query.status);
    const q = query.q === '' ? undefined : query.q;
    const { scope } = c.get('principal');
    const context: CursorContext = { owner: `${scope.userId}:${scope.mode}`, filters: { status: statuses, q } };
    const after = query.cursor === undefined ? undefined : decodeNameCursor('vehicles', context, query.cursor, (v) => IMEI.test(v));
    const position = after && { name: after.name, imei: after.id };
    const list = await latestState.vehicleList(scope);
    const answerKey = JSON.stringify([query.limit, query.cursor ?? null, statuses ?? null, q ?? null]);
    const encoded = list.answers.get(answerKey);
    if (encoded) return c.body(encoded as Uint8Array<ArrayBuffer>, 200, { 'Content-Type': 'application/json' }) as never;
    let now = list.readAt;
    let rows: VehicleRow[] | undefined = vehicleListPage(list, { after: position, statuses, q, limit: query.limit, thresholds });
    const fromList = rows !== undefined;
    if (!rows) {
      now = new Date();
      rows = await vehiclePage(staleDb, scope, { after: position, statuses, q, limit: query.limit, now, thresholds });
    }
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const last = page[page.length - 1];
    const answer = {
      data: page.map((row) => vehicleView(row, now, thresholds)),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeNameCursor('vehicles', context, { name: last.name, id: last.imei }) : null,
    };
    if (!fromList) return c.json(answer, 200);
    const body = utf8.encode(JSON.stringify(answer));
    if (list.answers.size < MAX_ANSWERS_PER_READ) list.answers.set(answerKey, body);
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { 'Content-Type': 'application/json' }) as never;
  });

  app.openapi(routes.get, async (c) => {
    const row = await visibleVehicle(staleDb, c.get('principal').scope, c.req.valid('param').id);
    if (!row) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(vehicleDetailView(row, new Date(), thresholds)), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const row = await registerVehicle(db, c.get('principal').scope, {
      imei: body.imei, name: body.name, plates: body.plates, protocol: body.protocol, speedLimitKmh: body.speed_limit_kmh, userIds: body.user_ids,
      fuelTankLitres: body.fuel_tank_litres,
    });
    return c.json(envelope(vehicleDetailView(row, new Date(), thresholds)), 201);
  });

  app.openapi(routes.patch, async (c) => {
    const body = c.req.valid('json');
    const row = await updateVehicle(db, c.get('principal').scope, c.req.valid('param').id, {
      name: body.name, plates: body.plates, protocol: body.protocol, speedLimitKmh: body.speed_limit_kmh, userIds: body.user_ids,
      fuelTankLitres: body.fuel_tank_litres,
    });
    if (!row) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(vehicleDetailView(row, new Date(), thresholds)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const imei = c.req.valid('param').id;
    if (!(await deleteVehicle(db, c.get('principal').scope, imei))) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope({ id: imei, deleted: true as const }), 200);
  });

  return app;
}

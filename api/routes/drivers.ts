import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { AccessScope } from '../../db/access-scope.ts';
import { assignDriver, deleteDriverWithHistory, unassignDriver } from '../../db/driver-assignments.ts';
import { assignmentHistory, driverPage, drivingTotals, findDriver, insertDriver, updateDriver } from '../../db/drivers.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeNameCursor, encodeNameCursor, type CursorContext } from '../pagination/name-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { parseIsoLocal } from '../../domain/time/zoned-time.ts';
import { DriverDetailSchema, DriverSchema, driverDetailView, driverView } from '../views/driver-view.ts';

const MAX_LIMIT = 500;
const MAX_SERIAL_ID = 2_147_483_647;
const HISTORY = 50;

const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 4 });
const name = z.string().max(400).refine(noNul, 'name must not contain NUL characters').openapi({ description: 'Trimmed, 1 to 200 characters', example: 'Ana López' });
const identifier = z
  .string()
  .max(200)
  .openapi({
    description: 'The key as the trackers read it: a Teltonika iButton or RFID card as 16 hex digits, a Queclink or GT06 tag in hex, a card or licence number. Trimmed and stored upper case, 1 to 64 characters; unique among the account\'s drivers of the key\'s mode.',
    example: '01C68011010000C7',
  });
const phone = z.string().max(100).nullable().openapi({ description: 'Up to 40 characters of digits, spaces and + ( ) . / -; null or empty: none', example: '+52 55 1234 5678' });

const CreateBody = z.object({ name, identifier, phone: phone.optional() }).strict().openapi('DriverCreate');
const PatchBody = z.object({ name: name.optional(), identifier: identifier.optional(), phone: phone.optional() }).strict().openapi('DriverUpdate');
const AssignBody = z
  .object({
    vehicleId: z.string().min(1).max(64).refine(noNul, 'vehicleId must not contain NUL characters').openapi({ description: 'The IMEI of a vehicle the key can see', example: '356307042441013' }),
    since: z.string().max(40).optional().openapi({
      description: 'From when: `2024-05-01T08:30` or `2024-05-01T08:30:00` in the user\'s timezone, or with `Z` or an offset; default now. Not in the future, and after the newest change of both the vehicle\'s and the driver\'s assignments.',
      example: '2024-05-01T08:30',
    }),
  })
  .strict()
  .openapi('DriverAssignmentCreate');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).openapi({ description: `1 to ${MAX_LIMIT}, default 50` }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page, with the same q' }),
  q: z.string().min(1).max(200).refine(noNul, 'q must not contain NUL characters').optional().openapi({ description: 'Case-insensitive part of the name or the identifier', example: 'ana' }),
});

const DriverPage = z
  .object({ data: z.array(DriverSchema), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .openapi('DriverPage');

const TAG = ['Drivers'];

const routes = {
  list: createRoute({
    method: 'get', path: '/drivers', tags: TAG, summary: 'The account\'s drivers, by name, with their current vehicle and rating',
    description: 'Cursor pages ordered by name, then id (keyset: rows added or renamed meanwhile are neither repeated nor skipped). Drivers belong to the account and the key\'s mode, whichever user the key belongs to.',
    middleware: [requirePermission('drivers:read')] as const,
    request: { query: ListQuery },
    responses: { 200: { description: 'A page of drivers', content: json(DriverPage) }, ...errorResponses([400, 'Invalid limit, q or cursor']) },
  }),
  create: createRoute({
    method: 'post', path: '/drivers', tags: TAG, summary: 'Register a driver',
    description: 'A vehicle that reported this identifier unrecognised stops listing it; its next fix with the key assigns the driver.',
    middleware: [requirePermission('drivers:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The driver', content: json(envelopeSchema(DriverSchema, 'DriverCreated')) },
      ...errorResponses([400, 'Invalid field'], [409, 'Another driver has this identifier'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  get: createRoute({
    method: 'get', path: '/drivers/{id}', tags: TAG, summary: 'One driver with the rating\'s basis and assignment history',
    middleware: [requirePermission('drivers:read')] as const,
    request: { params: z.object({ id }) },
    responses: { 200: { description: 'The driver', content: json(envelopeSchema(DriverDetailSchema, 'DriverResponse')) }, ...errorResponses([400, 'Invalid id'], [404, 'No such driver']) },
  }),
  patch: createRoute({
    method: 'patch', path: '/drivers/{id}', tags: TAG, summary: 'Change a driver\'s name, identifier or phone',
    description: 'Only the fields given change. A new identifier takes effect at the next fix that carries it; the old key then names nobody.',
    middleware: [requirePermission('drivers:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The driver', content: json(envelopeSchema(DriverSchema, 'DriverUpdated')) },
      ...errorResponses([400, 'Invalid field'], [404, 'No such driver'], [409, 'Another driver has this identifier'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/drivers/{id}', tags: TAG, summary: 'Delete a driver with their assignment history',
    description: 'Trips keep their figures with no driver; a vehicle the driver was assigned to logs `driver.changed` (reason `driverDeleted`).',
    middleware: [requirePermission('drivers:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.number().int(), deleted: z.literal(true) }), 'DriverDeleted')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such driver']),
    },
  }),
  assign: createRoute({
    method: 'post', path: '/drivers/{id}/assignment', tags: TAG, summary: 'Assign the driver to a vehicle by hand',
    description: 'The vehicle\'s current assignment and the driver\'s (on another vehicle) end at `since`. A key the vehicle\'s tracker reads later overrides it. Assigning a driver to the vehicle they already drive changes nothing. Logs `driver.changed`.',
    middleware: [requirePermission('drivers:write')] as const,
    request: { params: z.object({ id }), body: { content: json(AssignBody), required: true } },
    responses: {
      200: { description: 'The driver, assigned', content: json(envelopeSchema(DriverSchema, 'DriverAssigned')) },
      ...errorResponses(
        [400, 'Invalid field, or since in the future'],
        [404, 'No such driver, or a vehicle the key cannot see'],
        [409, 'since is not after the newest change of the vehicle\'s or the driver\'s assignments'],
        [413, 'Body too large'],
        [415, 'Not JSON'],
      ),
    },
  }),
  unassign: createRoute({
    method: 'delete', path: '/drivers/{id}/assignment', tags: TAG, summary: 'End the driver\'s current assignment now',
    description: 'Logs `driver.changed` (reason `unassigned`) on the vehicle.',
    middleware: [requirePermission('drivers:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The driver, unassigned', content: json(envelopeSchema(DriverSchema, 'DriverUnassigned')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such driver'], [409, 'The driver has no current vehicle']),
    },
  }),
};

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** `since` as an instant: wall clock in the user's timezone, or an explicit offset. */
function parseSince(text: string, timeZone: string): Date {
  if (ISO_WITH_ZONE.test(text)) {
    const at = new Date(text);
    if (!Number.isNaN(at.getTime())) return at;
  } else {
    const local = parseIsoLocal(text, timeZone, false);
    if (local && !local.dateOnly) return local.instant;
  }
  throw new ApiError(400, 'since must be a date-time such as 2024-05-01T08:30 (in your timezone) or 2024-05-01T14:30:00Z');
}

const cursorContext = (scope: AccessScope, q: string | undefined): CursorContext => ({ owner: `${scope.accountId}:${scope.mode}`, filters: { q } });
const validId = (v: string) => /^\d{1,10}$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_SERIAL_ID;

export function driverRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  const shown = async (scope: AccessScope, driverId: number, timeZone: string) => {
    const driver = await findDriver(db, scope, driverId);
    if (!driver) throw new ApiError(404, `Driver not found: ${driverId}`);
    return driverView(driver, (await drivingTotals(db, [driver.id])).get(driver.id), timeZone);
  };

  app.openapi(routes.list, async (c) => {
    const { scope, timezone } = c.get('principal');
    const { limit, cursor, q } = c.req.valid('query');
    const context = cursorContext(scope, q);
    const after = cursor === undefined ? undefined : decodeNameCursor('drivers', context, cursor, validId);
    const rows = await driverPage(db, scope, { after: after && { name: after.name, id: Number(after.id) }, q, limit });
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const totals = await drivingTotals(db, page.map((d) => d.id));
    const last = page[page.length - 1];
    return c.json({
      data: page.map((d) => driverView(d, totals.get(d.id), timezone)),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeNameCursor('drivers', context, { name: last.name, id: String(last.id) }) : null,
    }, 200);
  });

  app.openapi(routes.create, async (c) => {
    const { scope, timezone } = c.get('principal');
    const body = c.req.valid('json');
    const driverId = await insertDriver(db, scope, { name: body.name, identifier: body.identifier, phone: body.phone ?? null });
    return c.json(envelope(await shown(scope, driverId, timezone)), 201);
  });

  app.openapi(routes.get, async (c) => {
    const { scope, timezone } = c.get('principal');
    const driverId = c.req.valid('param').id;
    const driver = await findDriver(db, scope, driverId);
    if (!driver) throw new ApiError(404, `Driver not found: ${driverId}`);
    const totals = (await drivingTotals(db, [driver.id])).get(driver.id)!;
    return c.json(envelope(driverDetailView(driver, totals, await assignmentHistory(db, scope, driver.id, HISTORY), timezone)), 200);
  });

  app.openapi(routes.patch, async (c) => {
    const { scope, timezone } = c.get('principal');
    const driverId = c.req.valid('param').id;
    if (!(await updateDriver(db, scope, driverId, c.req.valid('json')))) throw new ApiError(404, `Driver not found: ${driverId}`);
    return c.json(envelope(await shown(scope, driverId, timezone)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const driverId = c.req.valid('param').id;
    if (!(await deleteDriverWithHistory(db, c.get('principal').scope, driverId))) throw new ApiError(404, `Driver not found: ${driverId}`);
    return c.json(envelope({ id: driverId, deleted: true as const }), 200);
  });

  app.openapi(routes.assign, async (c) => {
    const { scope, timezone } = c.get('principal');
    const driverId = c.req.valid('param').id;
    const body = c.req.valid('json');
    await assignDriver(db, scope, driverId, body.vehicleId, body.since === undefined ? undefined : parseSince(body.since, timezone));
    return c.json(envelope(await shown(scope, driverId, timezone)), 200);
  });

  app.openapi(routes.unassign, async (c) => {
    const { scope, timezone } = c.get('principal');
    const driverId = c.req.valid('param').id;
    if (!(await unassignDriver(db, scope, driverId))) throw new ApiError(409, `Driver ${driverId} has no current vehicle`);
    return c.json(envelope(await shown(scope, driverId, timezone)), 200);
  });

  return app;
}

import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { AccessScope } from '../../db/access-scope.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import {
  deleteMaintenanceItem, findMaintenanceItem, insertMaintenanceItem, maintenancePage, maintenanceServices, recordMaintenanceService,
  updateMaintenanceItem, visibleMaintenanceItems, visibleVehicleReading, type MaintenanceItem,
} from '../../db/maintenance.ts';
import {
  DEFAULT_DUE_SOON, MAINTENANCE_KINDS, MAINTENANCE_STATUSES, currentReading, defaultTolerance, isCalendarDate, nextThreshold, utcDate,
  type DueSoonWindow, type MaintenanceKind, type Threshold,
} from '../../domain/maintenance/maintenance-schedule.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { MaintenanceItemSchema, MaintenanceServiceSchema, maintenanceItemView, maintenanceServiceView } from '../views/maintenance-view.ts';

const MAX_SERIAL_ID = 2_147_483_647;
const MAX_LIMIT = 500;
/** Beyond any vehicle's life, as for the odometer and engine hours baselines. */
const MAX_KM = 10_000_000;
const MAX_HOURS = 1_000_000;
const MAX_DAYS = 36_500;
const LIMITS: Record<MaintenanceKind, { max: number; unit: string }> = {
  odometer: { max: MAX_KM, unit: 'km' }, engineHours: { max: MAX_HOURS, unit: 'hours' }, calendar: { max: MAX_DAYS, unit: 'days' },
};

const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 31 });
const name = z.string().trim().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters').refine(noNul, 'name must not contain NUL characters').openapi({ description: '1 to 200 characters', example: 'Oil change' });
const amount = (what: string) => z.number().min(0, `${what} must be 0 or more`).openapi({ description: `In the item's unit (km, hours or whole days)` });
const dateOrNumber = (what: string, description: string) => z.union([z.number(), z.string().max(40)]).openapi({ description, example: 120_000 });

const CreateBody = z
  .object({
    vehicleId: z.string().min(1).max(64).refine(noNul, 'vehicleId must not contain NUL characters').openapi({ description: 'The IMEI of a vehicle the key can see', example: '356307042441013' }),
    name,
    kind: z.enum(MAINTENANCE_KINDS).openapi({ description: '`odometer` (km), `engineHours` (hours) or `calendar` (days)' }),
    interval: z.number().gt(0, 'interval must be more than 0').openapi({ description: 'Every this many km, hours or days (calendar: whole days)', example: 10_000 }),
    tolerance: amount('tolerance').optional().openapi({ description: 'How far past the threshold the item becomes overdue, in its unit; default a tenth of the interval (calendar: rounded up to whole days)', example: 1_000 }),
    from: dateOrNumber('from', 'What the interval counts from: the odometer (km) or engine hours at the last service, or its date (`YYYY-MM-DD`) for calendar items. The first threshold is one interval on. Default: the vehicle\'s reading now (today for calendar items)').optional(),
  })
  .strict()
  .openapi('MaintenanceCreate');

const PatchBody = z
  .object({
    name: name.optional(),
    interval: z.number().gt(0, 'interval must be more than 0').optional().openapi({ description: 'Takes effect at the next service; give `nextDue` to move the current threshold too' }),
    tolerance: amount('tolerance').optional(),
    nextDue: dateOrNumber('nextDue', 'Sets the next threshold: km or hours, or a date (`YYYY-MM-DD`) for calendar items').optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give name, interval, tolerance or nextDue')
  .openapi('MaintenanceUpdate');

const ServiceBody = z
  .object({
    performedOn: z.string().max(40).optional().openapi({ description: 'The date of the service, `YYYY-MM-DD` (UTC), not in the future; default today', example: '2026-05-02' }),
    odometerKm: z.number().min(0, 'odometerKm must be 0 or more').max(MAX_KM, `odometerKm must be at most ${MAX_KM}`).optional().openapi({ description: 'The odometer at the service; default the vehicle\'s now', example: 130_212 }),
    engineHours: z.number().min(0, 'engineHours must be 0 or more').max(MAX_HOURS, `engineHours must be at most ${MAX_HOURS}`).optional().openapi({ description: 'The engine hours at the service; default the vehicle\'s now', example: 3_620.5 }),
    note: z.string().max(2000, 'note must be at most 2000 characters').refine(noNul, 'note must not contain NUL characters').optional().openapi({ example: 'Synthetic 5W-30, filter replaced' }),
    cost: z.number().min(0, 'cost must be 0 or more').max(1e12, 'cost must be at most 1e12').optional().openapi({ example: 84.5 }),
  })
  .strict()
  .openapi('MaintenanceServiceCreate');

const windowQuery = {
  withinKm: z.coerce.number().min(0).max(MAX_KM).optional().openapi({ description: `An odometer item is dueSoon this many km before its threshold (default ${DEFAULT_DUE_SOON.km})` }),
  withinHours: z.coerce.number().min(0).max(MAX_HOURS).optional().openapi({ description: `An engine-hours item is dueSoon this many hours before (default ${DEFAULT_DUE_SOON.hours})` }),
  withinDays: z.coerce.number().int().min(0).max(MAX_DAYS).optional().openapi({ description: `A calendar item is dueSoon this many days before (default ${DEFAULT_DUE_SOON.days})` }),
};

const ListQuery = z.object({
  vehicleId: z.string().min(1).max(64).refine(noNul, 'vehicleId must not contain NUL characters').optional().openapi({ description: 'Only this vehicle\'s items (IMEI)' }),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100).openapi({ description: `1 to ${MAX_LIMIT}, default 100` }),
  cursor: z.string().regex(/^\d{1,10}$/, 'cursor must be the next_cursor of a previous page').optional().openapi({ description: 'next_cursor of the previous page, with the same vehicleId' }),
  ...windowQuery,
});

const ServicesQuery = z.object({ limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100).openapi({ description: `1 to ${MAX_LIMIT}, default 100; newest first` }) });
const ReportQuery = z.object({
  ...windowQuery,
  status: z.string().max(100).optional().openapi({ description: 'Comma-separated statuses to list (default `dueSoon,due,overdue`)', example: 'due,overdue' }),
});

const MaintenancePage = z.object({ data: z.array(MaintenanceItemSchema), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi('MaintenancePage');
const ServiceList = z.object({ data: z.array(MaintenanceServiceSchema) }).openapi('MaintenanceServiceList');
const Report = envelopeSchema(
  z.object({
    window: z.object({ km: z.number(), hours: z.number(), days: z.number() }).openapi({ description: 'The dueSoon windows used' }),
    counts: z.object(Object.fromEntries(MAINTENANCE_STATUSES.map((s) => [s, z.number().int()])) as Record<(typeof MAINTENANCE_STATUSES)[number], z.ZodNumber>)
      .openapi({ description: 'Every visible item, counted by status' }),
    items: z.array(MaintenanceItemSchema).openapi({ description: 'The items of the statuses asked for: overdue first, then due, dueSoon, ok and unknown; within each, by what remains as a share of the interval' }),
  }),
  'MaintenanceReport',
);

const TAG = ['Maintenance'];
const NOT_FOUND = (itemId: number) => `Maintenance item not found: ${itemId}`;
const VEHICLE_NOT_FOUND = 'Vehicle not found or no access';

const routes = {
  list: createRoute({
    method: 'get', path: '/maintenance', tags: TAG, summary: 'The maintenance items of the vehicles the key can see',
    description: 'Each with the vehicle\'s reading now, what is left before the next threshold and its status. Pages by id.',
    middleware: [requirePermission('maintenance:read')] as const,
    request: { query: ListQuery },
    responses: { 200: { description: 'A page of items', content: json(MaintenancePage) }, ...errorResponses([400, 'Invalid vehicleId, limit, cursor or window']) },
  }),
  create: createRoute({
    method: 'post', path: '/maintenance', tags: TAG, summary: 'Add a maintenance item to a vehicle',
    description: 'E.g. an oil change every 10,000 km from 120,000 km (`kind: odometer, interval: 10000, from: 120000`: due at 130,000 km), a service every 500 engine hours, an inspection every 180 days from 2026-01-15. Audited as `maintenance.created`.',
    middleware: [requirePermission('maintenance:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The item', content: json(envelopeSchema(MaintenanceItemSchema, 'MaintenanceCreated')) },
      ...errorResponses([400, 'Invalid field, or no reading to count from'], [404, VEHICLE_NOT_FOUND], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  get: createRoute({
    method: 'get', path: '/maintenance/{id}', tags: TAG, summary: 'One maintenance item',
    middleware: [requirePermission('maintenance:read')] as const,
    request: { params: z.object({ id }), query: z.object(windowQuery) },
    responses: { 200: { description: 'The item', content: json(envelopeSchema(MaintenanceItemSchema, 'MaintenanceResponse')) }, ...errorResponses([400, 'Invalid id or window'], [404, 'No such item']) },
  }),
  patch: createRoute({
    method: 'patch', path: '/maintenance/{id}', tags: TAG, summary: 'Change a maintenance item',
    description: 'Only the fields given change; the kind and the vehicle do not. A new `nextDue` is a new threshold: its due and overdue events are logged when the vehicle reaches it, even if the old one\'s were. Audited as `maintenance.updated`.',
    middleware: [requirePermission('maintenance:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The item', content: json(envelopeSchema(MaintenanceItemSchema, 'MaintenanceUpdated')) },
      ...errorResponses([400, 'Invalid field, or none given'], [404, 'No such item'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/maintenance/{id}', tags: TAG, summary: 'Delete a maintenance item with its services',
    description: 'Audited as `maintenance.deleted`.',
    middleware: [requirePermission('maintenance:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.number().int(), deleted: z.literal(true) }), 'MaintenanceDeleted')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such item']),
    },
  }),
  service: createRoute({
    method: 'post', path: '/maintenance/{id}/services', tags: TAG, summary: 'Record a service done',
    description: 'The next threshold becomes the service\'s reading plus the interval: its odometer (`odometerKm`) or engine hours (`engineHours`), the vehicle\'s now when not given, or its date plus the interval for calendar items. The item is no longer due or overdue, and the new threshold logs its own events. Audited as `maintenance.serviced`.',
    middleware: [requirePermission('maintenance:write')] as const,
    request: { params: z.object({ id }), body: { content: json(ServiceBody), required: true } },
    responses: {
      201: { description: 'The service, with the threshold it set', content: json(envelopeSchema(MaintenanceServiceSchema, 'MaintenanceServiceCreated')) },
      ...errorResponses([400, 'Invalid field, a date in the future, or no reading'], [404, 'No such item'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  services: createRoute({
    method: 'get', path: '/maintenance/{id}/services', tags: TAG, summary: 'The services recorded for an item, newest first',
    middleware: [requirePermission('maintenance:read')] as const,
    request: { params: z.object({ id }), query: ServicesQuery },
    responses: { 200: { description: 'The services', content: json(ServiceList) }, ...errorResponses([400, 'Invalid id or limit'], [404, 'No such item']) },
  }),
  report: createRoute({
    method: 'get', path: '/reports/maintenance', tags: TAG, summary: 'What is due soon, due and overdue across the fleet',
    description: 'Every visible item with its remaining km, hours or days and status, for the statuses asked for (default `dueSoon,due,overdue`), and the count of each status.',
    middleware: [requirePermission('maintenance:read')] as const,
    request: { query: ReportQuery },
    responses: { 200: { description: 'The report', content: json(Report) }, ...errorResponses([400, 'Invalid window or status']) },
  }),
};

const windowOf = (q: { withinKm?: number; withinHours?: number; withinDays?: number }): DueSoonWindow => ({
  km: q.withinKm ?? DEFAULT_DUE_SOON.km, hours: q.withinHours ?? DEFAULT_DUE_SOON.hours, days: q.withinDays ?? DEFAULT_DUE_SOON.days,
});

function checkAmount(kind: MaintenanceKind, field: string, value: number): number {
  const { max, unit } = LIMITS[kind];
  if (value > max) throw new ApiError(400, `${field} must be at most ${max} ${unit} for a ${kind} item`);
  if (kind === 'calendar' && !Number.isInteger(value)) throw new ApiError(400, `${field} must be whole days for a calendar item`);
  return value;
}

/** A threshold or starting point as the kind takes it: a date for calendar items, a number otherwise. */
function thresholdOf(kind: MaintenanceKind, field: string, value: number | string): Threshold {
  if (kind === 'calendar') {
    if (typeof value !== 'string' || !isCalendarDate(value)) throw new ApiError(400, `${field} must be a date such as 2026-01-15 for a calendar item`);
    return value;
  }
  if (typeof value !== 'number') throw new ApiError(400, `${field} must be a number (${LIMITS[kind].unit}) for a ${kind} item`);
  if (value < 0) throw new ApiError(400, `${field} must be 0 or more`);
  return checkAmount(kind, field, value);
}

export function maintenanceRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  const found = async (database: Db, scope: AccessScope, itemId: number, lock = false): Promise<MaintenanceItem> => {
    const item = await findMaintenanceItem(database, scope, itemId, lock);
    if (!item) throw new ApiError(404, NOT_FOUND(itemId));
    return item;
  };

  app.openapi(routes.list, async (c) => {
    const { scope } = c.get('principal');
    const query = c.req.valid('query');
    const rows = await maintenancePage(db, scope, { imei: query.vehicleId, afterId: query.cursor === undefined ? undefined : Number(query.cursor), limit: query.limit });
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const now = new Date();
    return c.json({
      data: page.map((m) => maintenanceItemView(m, windowOf(query), now)),
      has_more: hasMore,
      next_cursor: hasMore ? String(page[page.length - 1]!.id) : null,
    }, 200);
  });

  app.openapi(routes.create, async (c) => {
    const { scope } = c.get('principal');
    const body = c.req.valid('json');
    const interval = checkAmount(body.kind, 'interval', body.interval);
    const tolerance = body.tolerance === undefined ? defaultTolerance(body.kind, interval) : checkAmount(body.kind, 'tolerance', body.tolerance);
    const from = body.from === undefined ? undefined : thresholdOf(body.kind, 'from', body.from);
    const created = await inTransaction(db, async (trx) => {
      const vehicle = await visibleVehicleReading(trx, scope, body.vehicleId);
      if (!vehicle) throw new ApiError(404, VEHICLE_NOT_FOUND);
      const start = from ?? currentReading(body.kind, vehicle, new Date());
      if (start === null) {
        throw new ApiError(400, `the vehicle has no ${body.kind === 'odometer' ? 'odometer' : 'engine hours'} reading yet: give from (its ${LIMITS[body.kind].unit} at the last service)`);
      }
      const itemId = await insertMaintenanceItem(trx, { deviceId: vehicle.deviceId, name: body.name, kind: body.kind, interval, tolerance, nextDue: nextThreshold(body.kind, interval, start) });
      await recordAudit(trx, auditActor(c), { action: 'maintenance.created', targetType: 'maintenance', targetId: String(itemId), details: { ...body, tolerance } });
      return found(trx, scope, itemId);
    });
    return c.json(envelope(maintenanceItemView(created, DEFAULT_DUE_SOON)), 201);
  });

  app.openapi(routes.get, async (c) => {
    const item = await found(db, c.get('principal').scope, c.req.valid('param').id);
    return c.json(envelope(maintenanceItemView(item, windowOf(c.req.valid('query')))), 200);
  });

  app.openapi(routes.patch, async (c) => {
    const { scope } = c.get('principal');
    const itemId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const changed = await inTransaction(db, async (trx) => {
      const item = await found(trx, scope, itemId, true);
      await updateMaintenanceItem(trx, item, {
        name: body.name,
        interval: body.interval === undefined ? undefined : checkAmount(item.kind, 'interval', body.interval),
        tolerance: body.tolerance === undefined ? undefined : checkAmount(item.kind, 'tolerance', body.tolerance),
        nextDue: body.nextDue === undefined ? undefined : thresholdOf(item.kind, 'nextDue', body.nextDue),
      });
      await recordAudit(trx, auditActor(c), { action: 'maintenance.updated', targetType: 'maintenance', targetId: String(itemId), details: { changed: body } });
      return found(trx, scope, itemId);
    });
    return c.json(envelope(maintenanceItemView(changed, DEFAULT_DUE_SOON)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const itemId = c.req.valid('param').id;
    const deleted = await inTransaction(db, async (trx) => {
      const gone = await deleteMaintenanceItem(trx, c.get('principal').scope, itemId);
      if (gone) await recordAudit(trx, auditActor(c), { action: 'maintenance.deleted', targetType: 'maintenance', targetId: String(itemId) });
      return gone;
    });
    if (!deleted) throw new ApiError(404, NOT_FOUND(itemId));
    return c.json(envelope({ id: itemId, deleted: true as const }), 200);
  });

  app.openapi(routes.service, async (c) => {
    const { scope } = c.get('principal');
    const itemId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const now = new Date();
    const today = utcDate(now);
    const performedOn = body.performedOn ?? today;
    if (!isCalendarDate(performedOn)) throw new ApiError(400, 'performedOn must be a date such as 2026-05-02');
    if (performedOn > today) throw new ApiError(400, `performedOn must not be in the future (today is ${today}, UTC)`);
    const recorded = await inTransaction(db, async (trx) => {
      const item = await found(trx, scope, itemId, true);
      const odometerKm = body.odometerKm ?? (item.kind === 'odometer' ? currentReading('odometer', item, now) as number | null : null);
      const engineHours = body.engineHours ?? (item.kind === 'engineHours' ? currentReading('engineHours', item, now) as number | null : null);
      const from = item.kind === 'calendar' ? performedOn : item.kind === 'odometer' ? odometerKm : engineHours;
      if (from === null) throw new ApiError(400, `the vehicle has no ${item.kind === 'odometer' ? 'odometer' : 'engine hours'} reading yet: give ${item.kind === 'odometer' ? 'odometerKm' : 'engineHours'}`);
      const service = await recordMaintenanceService(trx, item, {
        itemId, performedOn, odometerKm, engineHours, note: body.note ?? null, cost: body.cost ?? null, nextDue: nextThreshold(item.kind, item.interval, from),
      });
      await recordAudit(trx, auditActor(c), { action: 'maintenance.serviced', targetType: 'maintenance', targetId: String(itemId), details: { ...body, performedOn, nextDue: service.nextDue } });
      return service;
    });
    return c.json(envelope(maintenanceServiceView(recorded)), 201);
  });

  app.openapi(routes.services, async (c) => {
    const item = await found(db, c.get('principal').scope, c.req.valid('param').id);
    const services = await maintenanceServices(db, item.id, c.req.valid('query').limit);
    return c.json({ data: services.map(maintenanceServiceView) }, 200);
  });

  app.openapi(routes.report, async (c) => {
    const query = c.req.valid('query');
    const wanted = statusFilter(query.status);
    const window = windowOf(query);
    const now = new Date();
    const views = (await visibleMaintenanceItems(db, c.get('principal').scope)).map((m) => maintenanceItemView(m, window, now));
    const counts = Object.fromEntries(MAINTENANCE_STATUSES.map((s) => [s, views.filter((v) => v.status === s).length])) as Record<(typeof MAINTENANCE_STATUSES)[number], number>;
    const rank = (s: string) => ['overdue', 'due', 'dueSoon', 'ok', 'unknown'].indexOf(s);
    const items = views
      .filter((v) => wanted.has(v.status))
      .sort((a, b) => rank(a.status) - rank(b.status) || (a.remaining ?? Infinity) / a.interval - (b.remaining ?? Infinity) / b.interval || a.id - b.id);
    return c.json(envelope({ window, counts, items }), 200);
  });

  return app;
}

function statusFilter(raw: string | undefined): Set<string> {
  if (raw === undefined) return new Set(['dueSoon', 'due', 'overdue']);
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new ApiError(400, 'status must name at least one status');
  for (const n of names) {
    if (!(MAINTENANCE_STATUSES as readonly string[]).includes(n)) throw new ApiError(400, `status: unknown "${n}"; known: ${MAINTENANCE_STATUSES.join(', ')}`);
  }
  return new Set(names);
}

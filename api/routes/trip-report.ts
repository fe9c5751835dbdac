import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { stopsInRange, tripsInRange, vehicleTotals, type StopRow, type TripRow } from '../../db/trip-report.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { includedSections, reportDevices } from '../query/report-query.ts';
import type { RouteDeps } from '../route-deps.ts';
import { RANGE_BOTH_REQUIRED, reportRange } from '../time/report-range.ts';
import { isoInZone } from '../../domain/time/zoned-time.ts';
import { TRIP_REPORT_SECTIONS, TripReportSchema, stopView, summaryView, tripView } from '../views/trip-report-view.ts';

const MAX_RANGE_DAYS = 366;
/** Trips (and, separately, stops) one answer lists at most: a whole fleet over months is a summary's job. */
export const MAX_LISTED = 50_000;

const bound = (description: string, example: string) => z.string({ error: RANGE_BOTH_REQUIRED }).openapi({ description, example });

const tripReport = createRoute({
  method: 'get',
  path: '/reports/trips',
  tags: ['Reports'],
  summary: 'Trips, stops and driving KPIs per vehicle and for the fleet',
  description: [
    'Trips and stops as the engine segmented them while the fixes arrived (see the README, "Trips and stops"), for the visible vehicles, listed when they start within the range.',
    'A trip in progress has endTime null and its figures up to its last fix; a stop the vehicle is still at likewise.',
    `At most ${MAX_LISTED.toLocaleString('en')} trips and as many stops per answer: a larger report is refused with 400 (narrow the range or deviceIds, or ask only for the summary).`,
  ].join('\n\n'),
  middleware: [requirePermission('reports:read')] as const,
  request: {
    query: z.object({
      from: bound('Start, ISO date or date-time, in the user timezone', '2024-05-01'),
      to: bound('End, ISO date or date-time; a date alone covers that whole day', '2024-05-31'),
      deviceIds: z.string().optional().openapi({ description: 'Comma-separated IMEIs; omitted = every visible vehicle' }),
      include: z.string().optional().openapi({ description: 'Comma-separated subset of trips, stops, summary; default all three' }),
    }),
  },
  responses: {
    200: { description: 'The report', content: { 'application/json': { schema: envelopeSchema(TripReportSchema, 'TripReportResponse') } } },
    ...errorResponses([400, 'Missing or invalid parameters, or more rows than one answer holds'], [404, 'A listed device does not exist or is not accessible']),
  },
});

function byDevice<R extends { device_id: number }>(rows: R[]): Map<number, R[]> {
  const map = new Map<number, R[]>();
  for (const r of rows) {
    const list = map.get(r.device_id);
    if (list) list.push(r);
    else map.set(r.device_id, [r]);
  }
  return map;
}

export function tripReportRoutes({ staleDb: db, config }: RouteDeps) {
  // Reports tolerate a few seconds of staleness: they are read from the replica while it keeps up.
  const maxGapS = config.tripMaxGapS ?? 3600;
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(tripReport, async (c) => {
    const { scope, timezone } = c.get('principal');
    const query = c.req.valid('query');
    const range = reportRange(query.from, query.to, timezone, MAX_RANGE_DAYS);
    const included = includedSections(query.include, TRIP_REPORT_SECTIONS);
    const devices = await reportDevices(db, scope, query.deviceIds);

    const filter = { deviceIds: devices.map((d) => d.id), from: range.from, to: range.to };
    const tooMany = (what: string) =>
      new ApiError(400, `The report holds more than ${MAX_LISTED} ${what}; narrow the range or deviceIds, or ask for include=summary`);
    let trips = new Map<number, TripRow[]>();
    let stops = new Map<number, StopRow[]>();
    if (included.includes('trips')) {
      const rows = await tripsInRange(db, filter, MAX_LISTED + 1);
      if (rows.length > MAX_LISTED) throw tooMany('trips');
      trips = byDevice(rows);
    }
    if (included.includes('stops')) {
      const rows = await stopsInRange(db, filter, MAX_LISTED + 1);
      if (rows.length > MAX_LISTED) throw tooMany('stops');
      stops = byDevice(rows);
    }
    const totals = included.includes('summary') ? new Map((await vehicleTotals(db, filter)).map((t) => [t.device_id, t])) : undefined;
    // A range that is one instant still has a length for utilisation: a second.
    const now = Date.now();
    const rangeS = Math.max(1, (range.to.getTime() + 1 - range.from.getTime()) / 1000);

    const data: z.infer<typeof TripReportSchema> = {
      range: { from: isoInZone(range.from, timezone), to: isoInZone(range.to, timezone) },
      deviceCount: devices.length,
      included,
      vehicles: devices.map((d) => {
        const vehicle: z.infer<typeof TripReportSchema>['vehicles'][number] = { deviceId: d.imei, deviceName: d.name };
        const own = totals?.get(d.id);
        if (totals) vehicle.summary = summaryView(own ? [own] : [], rangeS);
        if (included.includes('trips')) vehicle.trips = (trips.get(d.id) ?? []).map((t) => tripView(t, timezone, now, maxGapS));
        if (included.includes('stops')) vehicle.stops = (stops.get(d.id) ?? []).map((s) => stopView(s, timezone));
        return vehicle;
      }),
    };
    if (totals) data.fleet = summaryView([...totals.values()], rangeS);
    return c.json(envelope(data), 200);
  });
  return app;
}

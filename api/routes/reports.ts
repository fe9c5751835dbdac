import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { crossingEvents, crossingSummary, visitsOverlapping, type ActivityFilter } from '../../db/geofence-activity.ts';
import { geofencesById } from '../../db/geofences.ts';
import { ApiError } from '../api-error.ts';
import { MAX_LISTED } from './trip-report.ts';
import { commaList } from '../query/comma-list.ts';
import { includedSections, reportDevices } from '../query/report-query.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { RANGE_BOTH_REQUIRED, reportRange } from '../time/report-range.ts';
import { formatLocal } from '../../domain/time/zoned-time.ts';
import { formatDuration } from '../../domain/time/format-duration.ts';
import { GeofenceReportSchema, REPORT_SECTIONS } from '../views/report-view.ts';

const MAX_RANGE_DAYS = 366;
/** Rows one answer lists at most in each section, as the trips report: a whole fleet over months is narrowed, not streamed. */
export const MAX_REPORT_ROWS = MAX_LISTED;

const bound = (description: string, example: string) =>
  z.string({ error: RANGE_BOTH_REQUIRED }).openapi({ description, example });

const reportQuery = z.object({
  from: bound('Start, ISO date or date-time to the minute, in the user timezone', '2024-05-01'),
  to: bound('End, ISO date or date-time; a date alone covers that whole day', '2024-05-01'),
  deviceIds: z.string().optional().openapi({ description: 'Comma-separated IMEIs; omitted = every visible vehicle' }),
  geofenceIds: z.string().optional().openapi({ description: 'Comma-separated geofence ids; omitted = every geofence' }),
  include: z.string().optional().openapi({ description: 'Comma-separated subset of summary, events, visits; default all three' }),
});

const report = createRoute({
  method: 'get',
  path: '/reports/geofences',
  tags: ['Reports'],
  summary: 'Geofence activity report: summary, events and visits over a date range',
  description:
    [
      'Dates are read in the timezone of the key\'s user. Visits are listed when they overlap the range, with their true entry and exit times; a visit still open has exitTime null and its duration counted up to now.',
      `At most ${MAX_LISTED.toLocaleString('en')} rows in each section per answer: a larger report is refused with 400 (narrow the range, deviceIds or geofenceIds, or ask only for the summary).`,
    ].join('\n\n'),
  middleware: [requirePermission('reports:read')] as const,
  request: { query: reportQuery },
  responses: {
    200: { description: 'The report', content: { 'application/json': { schema: envelopeSchema(GeofenceReportSchema, 'GeofenceReportResponse') } } },
    ...errorResponses([400, 'Missing or invalid parameters, or more rows than one answer holds'], [404, 'A listed device or geofence does not exist or is not accessible']),
  },
});


export function reportRoutes({ staleDb: db }: RouteDeps) {
  // Reports tolerate a few seconds of staleness: they are read from the replica while it keeps up.
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(report, async (c) => {
    const { scope, timezone } = c.get('principal');
    const query = c.req.valid('query');
    const range = reportRange(query.from, query.to, timezone, MAX_RANGE_DAYS);
    const included = includedSections(query.include, REPORT_SECTIONS);

    const devices = await reportDevices(db, scope, query.deviceIds);

    const geofenceIds = (commaList(query.geofenceIds, 'geofenceIds') ?? []).map((raw) => {
      if (!/^\d{1,9}$/.test(raw)) throw new ApiError(400, `geofenceIds must be comma-separated integers, got "${raw}"`);
      return Number(raw);
    });
    const geofences = await geofencesById(db, scope, geofenceIds);
    const missingGeofence = geofenceIds.find((id) => !geofences.some((g) => g.id === id));
    if (missingGeofence !== undefined) throw new ApiError(404, `Geofence not found: ${missingGeofence}`);

    const filter: ActivityFilter = {
      accountId: scope.accountId,
      mode: scope.mode,
      deviceIds: devices.map((d) => d.id),
      geofenceIds,
      from: range.from,
      to: range.to,
    };
    const local = (t: Date) => formatLocal(t, timezone);
    // One row more than an answer holds tells a report that is too large from one that just fits.
    const capped = <R>(rows: R[], what: string): R[] => {
      if (rows.length <= MAX_REPORT_ROWS) return rows;
      throw new ApiError(400, `The report holds more than ${MAX_REPORT_ROWS} ${what}; narrow the range, deviceIds or geofenceIds, or ask for include=summary`);
    };
    const now = Date.now();
    const data: z.infer<typeof GeofenceReportSchema> = {
      range: { from: local(range.from), to: local(range.to) },
      deviceCount: devices.length,
      geofenceCount: geofenceIds.length,
      included,
    };
    if (included.includes('summary')) {
      data.summary = capped(await crossingSummary(db, filter, MAX_REPORT_ROWS + 1), 'summary rows').map((r) => ({
        deviceId: r.imei,
        deviceName: r.deviceName,
        geofenceId: r.geofenceId,
        geofenceName: r.geofenceName,
        timesCrossed: r.timesCrossed,
        firstCross: local(r.firstCross),
        lastCross: local(r.lastCross),
      }));
    }
    if (included.includes('events')) {
      data.events = capped(await crossingEvents(db, filter, MAX_REPORT_ROWS + 1), 'events').map((r) => ({
        deviceId: r.imei,
        deviceName: r.deviceName,
        geofenceName: r.geofenceName,
        eventType: r.type === 'enter' ? ('Entrada' as const) : ('Salida' as const),
        dateTime: local(r.fix_time),
      }));
    }
    if (included.includes('visits')) {
      data.visits = capped(await visitsOverlapping(db, filter, MAX_REPORT_ROWS + 1), 'visits').map((r) => ({
        deviceId: r.imei,
        deviceName: r.deviceName,
        geofenceName: r.geofenceName,
        entryTime: local(r.entry_time),
        exitTime: r.exit_time ? local(r.exit_time) : null,
        duration: formatDuration((r.exit_time?.getTime() ?? now) - r.entry_time.getTime()),
      }));
    }
    return c.json(envelope(data), 200);
  });
  return app;
}

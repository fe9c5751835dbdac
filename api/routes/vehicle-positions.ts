import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { visibleDevicesByImei } from '../../db/devices.ts';
import { positionsAfter, type PositionRange } from '../../db/position-history.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { errorResponses } from '../envelope.ts';
import { MAX_MAP_POINTS, MAX_SIMPLIFIED_FIXES, mapTrackRows } from '../positions/map-track.ts';
import { decodePositionCursor, encodePositionCursor, type PositionCursor } from '../positions/position-cursor.ts';
import { positionCsvStream } from '../positions/position-csv.ts';
import { PositionFeatureCollectionSchema, positionFeatureCollection } from '../positions/position-geojson.ts';
import { PositionPageSchema, positionView } from '../positions/position-view.ts';
import { simplifyFixes } from '../positions/track-simplifier.ts';
import type { RouteDeps } from '../route-deps.ts';
import { reportRange } from '../time/report-range.ts';

const NOT_FOUND = 'Vehicle not found or no access';
export const MAX_RANGE_DAYS = 31;
const DEFAULT_RANGE_MS = 24 * 3_600_000;
export const DEFAULT_LIMIT = 1_000;
export const MAX_LIMIT = 5_000;
/** Fixes per query of a CSV export: one batch is what memory holds. */
export const CSV_BATCH_ROWS = 5_000;
const MAX_SIMPLIFY_M = 100_000;

const fmt = (n: number) => n.toLocaleString('en');

const id = z
  .string()
  .min(1)
  .max(64)
  .refine((s) => !s.includes('\u0000'), 'id must not contain NUL characters')
  .openapi({ param: { name: 'id', in: 'path' }, description: 'The IMEI (deviceId of the device endpoints)', example: '356307042441013' });

const listPositions = createRoute({
  method: 'get',
  path: '/vehicles/{id}/positions',
  tags: ['Vehicles'],
  summary: "A vehicle's position history: pages of fixes, a GeoJSON track, or a CSV export",
  description: [
    "The fixes the tracker sent with fix time in [from, to], in fix-time order. from and to are read as in the reports (ISO date or date-time, wall clock in the key's user's timezone; a date alone as `to` covers that whole day); pass both or neither (the last 24 hours). The range may span at most " +
      `${MAX_RANGE_DAYS} days and from must be before to.`,
    `format=json (default): cursor pages of up to limit fixes (default ${fmt(DEFAULT_LIMIT)}, at most ${fmt(MAX_LIMIT)}); fixTime in ISO 8601 to the second with the user's offset. Pass next_cursor as cursor, with the same from/to or none, for the next page. A fix stored later behind the cursor (a late fix) is not seen by that paging.`,
    `format=geojson: the whole range as one application/geo+json FeatureCollection, not paged: a LineString of the valid fixes, then a Point per fix with its fields (fixTime in UTC). At most ${fmt(MAX_MAP_POINTS)} points: a larger range is refused with 400 (pass simplify or narrow the range).`,
    'format=csv: the whole range as text/csv (RFC 4180, header row, fixTime in UTC and fixTimeLocal in the user\'s zone, attributes as JSON), streamed while it is read. Not paged, not simplified.',
    `simplify=<metres>: Douglas–Peucker thinning of the valid fixes (invalid ones are left out), the first and last kept. GeoJSON simplifies the whole range (up to ${fmt(MAX_SIMPLIFIED_FIXES)} valid fixes); JSON simplifies each page on its own, so a page may hold fewer than limit fixes while has_more is true.`,
  ].join('\n\n'),
  middleware: [requirePermission('vehicles:read')] as const,
  request: {
    params: z.object({ id }),
    query: z.object({
      from: z.string().optional().openapi({ description: "Start, ISO date or date-time in the user's timezone; with to, or neither (the last 24 hours)", example: '2024-05-01' }),
      to: z.string().optional().openapi({ description: 'End, ISO date or date-time; a date alone covers that whole day', example: '2024-05-01' }),
      format: z.enum(['json', 'geojson', 'csv']).default('json').openapi({ description: 'json (paged, default), geojson or csv (whole range)' }),
      limit: z.coerce.number().int().min(1).max(MAX_LIMIT).optional().openapi({ description: `format=json only: fixes per page, 1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT}` }),
      cursor: z.string().max(200).optional().openapi({ description: 'format=json only: next_cursor of the previous page' }),
      simplify: z.coerce.number().positive().max(MAX_SIMPLIFY_M).optional().openapi({ description: `Tolerance in metres (above 0, at most ${fmt(MAX_SIMPLIFY_M)}); json and geojson only` }),
    }),
  },
  responses: {
    200: {
      description: 'The fixes, in the format asked for',
      content: {
        'application/json': { schema: PositionPageSchema },
        'application/geo+json': { schema: PositionFeatureCollectionSchema },
        'text/csv': {
          schema: z.string().openapi({ example: 'fixTime,fixTimeLocal,lat,lng,speedKmh,heading,altitude,satellites,ignition,odometerKm,valid,attributes\r\n2024-05-01T14:30:05.000Z,2024-05-01T08:30:05-06:00,19.4326,-99.1332,42.5,90,2240,11,true,12345.678,true,"{""rssi"": 23}"\r\n' }),
        },
      },
    },
    ...errorResponses([400, 'Invalid range, format, limit, simplify or cursor; or more fixes than one GeoJSON answer holds'], [404, NOT_FOUND]),
  },
});

/** from/to as asked: undefined when neither is given. */
function requestedRange(from: string | undefined, to: string | undefined, timeZone: string): { from: Date; to: Date } | undefined {
  if (from === undefined && to === undefined) return undefined;
  if (from === undefined || to === undefined) throw new ApiError(400, 'Pass both from and to, or neither (the last 24 hours)');
  const range = reportRange(from, to, timeZone, MAX_RANGE_DAYS);
  if (range.from.getTime() >= range.to.getTime()) throw new ApiError(400, 'from must be before to');
  return range;
}

/** The range a request reads: its cursor's (from/to, when given, must be the same), the one asked for, or the last 24 hours. */
function positionRange(deviceId: number, requested: { from: Date; to: Date } | undefined, cursor: PositionCursor | undefined): PositionRange {
  if (cursor) {
    if (requested && (requested.from.getTime() !== cursor.from.getTime() || requested.to.getTime() !== cursor.to.getTime())) {
      throw new ApiError(400, 'cursor was made for another from/to; pass the same range with it, or none');
    }
    return { deviceId, from: cursor.from, to: cursor.to };
  }
  if (requested) return { deviceId, ...requested };
  const now = Date.now();
  return { deviceId, from: new Date(now - DEFAULT_RANGE_MS), to: new Date(now) };
}

const compactUtc = (t: Date) => t.toISOString().replace(/[-:]|\.\d{3}/g, '');

export function vehiclePositionRoutes({ staleDb: db, log }: RouteDeps) {
  // The history tolerates a few seconds of staleness: it is read from the replica while it keeps up.
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(listPositions, async (c) => {
    const { scope, timezone } = c.get('principal');
    const { id: imei } = c.req.valid('param');
    const query = c.req.valid('query');
    if (query.format !== 'json' && (query.limit !== undefined || query.cursor !== undefined)) {
      throw new ApiError(400, `limit and cursor page format=json; format=${query.format} answers the whole range`);
    }
    if (query.format === 'csv' && query.simplify !== undefined) throw new ApiError(400, 'simplify does not apply to format=csv, which exports every fix');
    const requested = requestedRange(query.from, query.to, timezone);
    const [device] = await visibleDevicesByImei(db, scope, [imei]);
    if (!device) throw new ApiError(404, NOT_FOUND);
    const cursor = query.cursor === undefined ? undefined : decodePositionCursor(query.cursor, device.id, MAX_RANGE_DAYS * 86_400_000);
    const range = positionRange(device.id, requested, cursor);

    if (query.format === 'geojson') {
      const rows = await mapTrackRows(db, range, query.simplify);
      return c.body(JSON.stringify(positionFeatureCollection(rows)), 200, { 'Content-Type': 'application/geo+json' }) as never;
    }

    if (query.format === 'csv') {
      const first = await positionsAfter(db, range, undefined, CSV_BATCH_ROWS);
      const started = performance.now();
      const body = positionCsvStream(db, range, timezone, CSV_BATCH_ROWS, first, (result) => {
        const fields = { imei, rows: result.rows, batches: result.batches, ms: Math.round(performance.now() - started) };
        const log = c.get('log');
        if (result.outcome === 'failed') log.error('position export failed', { ...fields, error: (result.error as Error)?.stack ?? String(result.error) });
        else log.info(result.outcome === 'complete' ? 'position export complete' : 'position export stopped: the client went away', fields);
      });
      return c.body(body, 200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="positions-${imei}-${compactUtc(range.from)}-${compactUtc(range.to)}.csv"`,
        'X-Accel-Buffering': 'no',
      }) as never;
    }

    const limit = query.limit ?? DEFAULT_LIMIT;
    const rows = await positionsAfter(db, range, cursor?.after, limit + 1);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const shown = query.simplify === undefined ? page : simplifyFixes(page, query.simplify);
    return c.json(
      {
        data: shown.map((r) => positionView(r, timezone)),
        has_more: hasMore,
        next_cursor: hasMore ? encodePositionCursor({ deviceId: device.id, from: range.from, to: range.to, after: page[page.length - 1]!.fix_time }) : null,
      },
      200,
    );
  });
  return app;
}

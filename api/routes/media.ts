import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { visibleDevicesByImei } from '../../db/devices.ts';
import { mediaPage, visibleMediaFile } from '../../db/media.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { errorResponses } from '../envelope.ts';
import { decodeNameCursor, encodeNameCursor, type CursorContext } from '../pagination/name-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { reportRange } from '../time/report-range.ts';
import { MediaSchema, mediaView } from '../views/media-view.ts';

const VEHICLE_NOT_FOUND = 'Vehicle not found or no access';
const NOT_FOUND = 'Media not found or no access';
const MAX_LIMIT = 200;
const MAX_RANGE_DAYS = 366;
const BIGINT_MAX = 9_223_372_036_854_775_807n;

/**
 * What every picture is served with: its type as stored (read from its bytes when it arrived), never
 * sniffed by the browser, and a policy under which it can never run as a page (no scripts, no
 * plugins, no frames, a sandbox), even when opened directly.
 */
export const MEDIA_SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'private, max-age=86400, immutable',
} as const;

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const noNul = (s: string) => !s.includes('\u0000');

const mediaId = z
  .string()
  .regex(/^\d{1,19}$/, 'id must be a number')
  .refine((v) => !/^\d{1,19}$/.test(v) || BigInt(v) <= BIGINT_MAX, 'id is out of range')
  .openapi({ param: { name: 'id', in: 'path' }, example: '123' });

const ListQuery = z.object({
  vehicleId: z.string().min(1).max(64).refine(noNul, 'vehicleId must not contain NUL characters').openapi({ description: 'The vehicle\'s IMEI (required)', example: '864507031219974' }),
  from: z.string().optional().openapi({ description: 'Pictures taken at or after this: ISO date or date-time in the user\'s timezone; with to, or neither (every picture)', example: '2024-05-01' }),
  to: z.string().optional().openapi({ description: 'Pictures taken at or before this; a date alone covers that whole day', example: '2024-05-31' }),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).openapi({ description: `1 to ${MAX_LIMIT}, default 50` }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page, with the same vehicleId, from and to' }),
});

const MediaPage = z
  .object({ data: z.array(MediaSchema), has_more: z.boolean(), next_cursor: z.string().nullable().openapi({ description: 'null when has_more is false' }) })
  .openapi('MediaPage');

const binary = z.string().openapi({ format: 'binary', description: 'The picture\'s bytes, exactly as the tracker sent them' });

const header = (description: string, example?: string) => ({ schema: { type: 'string' as const, ...(example ? { example } : {}) }, description });

const routes = {
  list: createRoute({
    method: 'get', path: '/media', tags: ['Media'], summary: 'Photos a vehicle\'s tracker sent, newest first',
    description: [
      'Metadata of the pictures a vehicle\'s tracker sent (the answer to a take_photo command, or pictures the tracker took on its own), newest first; `url` serves each one\'s bytes. Only vehicles the key\'s user may see, in the key\'s mode: another account\'s or user\'s vehicle is 404.',
      `from and to filter by takenAt, read as in the reports (ISO date or date-time, wall clock in the key\'s user\'s timezone); pass both or neither; at most ${MAX_RANGE_DAYS} days. Keyset pages by id: a cursor continues after the last picture returned, and is bound to the key\'s user and mode and to vehicleId, from and to.`,
    ].join('\n\n'),
    middleware: [requirePermission('media:read')] as const,
    request: { query: ListQuery },
    responses: {
      200: { description: 'A page of pictures', content: json(MediaPage) },
      ...errorResponses([400, 'Missing vehicleId, or an invalid range, limit or cursor'], [404, VEHICLE_NOT_FOUND]),
    },
  }),
  get: createRoute({
    method: 'get', path: '/media/{id}', tags: ['Media'], summary: 'A photo\'s bytes',
    description: [
      'The picture itself (not JSON), byte for byte as the tracker sent it, with its type as read from its bytes when it arrived (image/jpeg or image/png), its length, its SHA-256 as a strong ETag (If-None-Match answers 304), and `Content-Disposition: inline; filename="..."`.',
      'It is served under `X-Content-Type-Options: nosniff` and a Content-Security-Policy of `default-src \'none\'` with `sandbox`, so a picture can never run as a page. Errors are JSON, as everywhere.',
    ].join('\n\n'),
    middleware: [requirePermission('media:read')] as const,
    request: { params: z.object({ id: mediaId }) },
    responses: {
      200: {
        description: 'The picture\'s bytes',
        headers: {
          'Content-Length': header('The picture\'s size in bytes', '48213'),
          ETag: header('Its SHA-256, quoted', '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"'),
          'Content-Disposition': header('inline, with its file name', 'inline; filename="camera_picture.jpg"'),
          'X-Content-Type-Options': header('nosniff', 'nosniff'),
          'Content-Security-Policy': header('A policy under which it cannot run as a page', MEDIA_SECURITY_HEADERS['Content-Security-Policy']),
        },
        content: { 'image/jpeg': { schema: binary }, 'image/png': { schema: binary } },
      },
      304: { description: 'Not modified: If-None-Match named its ETag' },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]),
    },
  }),
};

/** from/to as asked: undefined when neither is given (every picture). */
function requestedRange(from: string | undefined, to: string | undefined, timeZone: string): { from: Date; to: Date } | undefined {
  if (from === undefined && to === undefined) return undefined;
  if (from === undefined || to === undefined) throw new ApiError(400, 'Pass both from and to, or neither (every picture)');
  return reportRange(from, to, timeZone, MAX_RANGE_DAYS);
}

/** If-None-Match names this ETag (or `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

export function mediaRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const { scope, timezone } = c.get('principal');
    const range = requestedRange(query.from, query.to, timezone);
    const [device] = await visibleDevicesByImei(db, scope, [query.vehicleId]);
    if (!device) throw new ApiError(404, VEHICLE_NOT_FOUND);
    const context: CursorContext = {
      owner: `${scope.userId}:${scope.mode}`,
      filters: { vehicleId: query.vehicleId, from: range?.from.toISOString(), to: range?.to.toISOString() },
    };
    const after = query.cursor === undefined ? undefined : decodeNameCursor('media', context, query.cursor, (v) => /^\d{1,19}$/.test(v));
    if (after && after.name !== after.id) throw new ApiError(400, 'cursor is not one this list returned; start again without it');
    const rows = await mediaPage(db, scope, {
      deviceId: device.id, range, beforeId: after?.id, limit: query.limit,
    });
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const last = page[page.length - 1];
    return c.json({
      data: page.map(mediaView),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeNameCursor('media', context, { name: last.id, id: last.id }) : null,
    }, 200);
  });

  app.openapi(routes.get, async (c) => {
    const file = await visibleMediaFile(db, c.get('principal').scope, c.req.valid('param').id);
    if (!file) throw new ApiError(404, NOT_FOUND);
    const etag = `"${file.sha256}"`;
    if (matches(c.req.header('If-None-Match'), etag)) return c.body(null, 304, { ETag: etag, ...MEDIA_SECURITY_HEADERS }) as never;
    return c.body(new Uint8Array(file.bytes) as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': file.content_type,
      'Content-Length': String(file.bytes.length),
      ETag: etag,
      'Content-Disposition': `inline; filename="${file.file_name}"`,
      ...MEDIA_SECURITY_HEADERS,
    }) as never;
  });

  return app;
}

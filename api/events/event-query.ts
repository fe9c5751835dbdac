import { z } from '@hono/zod-openapi';
import type { AccessScope } from '../../db/access-scope.ts';
import type { Db } from '../../db/database.ts';
import { visibleDevicesByImei } from '../../db/devices.ts';
import type { EventFilter } from '../../db/event-log.ts';
import { parseEventTypePatterns } from '../../domain/events/event-catalog.ts';
import { ApiError } from '../api-error.ts';
import { commaList } from '../query/comma-list.ts';
import { parseIsoLocal } from '../../domain/time/zoned-time.ts';


/** The filters `GET /events` and its stream share. */
export const eventFilterQuery = {
  types: z.string().optional().openapi({
    description: 'Comma-separated event types; a trailing * matches a family (vehicle.geofence.*). Omitted: every type except vehicle.position, which the stream sends (every stored fix, no id: line) only when named.',
    example: 'vehicle.geofence.*,vehicle.panic',
  }),
  deviceIds: z.string().optional().openapi({ description: 'Comma-separated IMEIs; omitted = every visible vehicle (and events without one)' }),
  from: z.string().optional().openapi({
    description: 'Events that happened at or after this time: ISO date or date-time in the user\'s timezone (2024-05-01T08:30), or with an offset or Z',
    example: '2024-05-01',
  }),
  to: z.string().optional().openapi({ description: 'Events that happened at or before this time; a date alone covers that whole day', example: '2024-05-31' }),
};

const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** A bound with an offset is that instant; without one it is wall-clock time in the user's timezone, as the report reads it. */
function parseBound(text: string, name: string, timeZone: string, endOfDay: boolean): Date {
  if (WITH_OFFSET.test(text)) {
    const instant = new Date(text);
    if (!Number.isNaN(instant.getTime())) return instant;
  }
  const local = parseIsoLocal(text, timeZone, endOfDay);
  if (!local) throw new ApiError(400, `${name} "${text}" is not an ISO date or date-time (2024-05-01, 2024-05-01T08:30 or 2024-05-01T08:30:00Z)`);
  return local.instant;
}


/** Reads the shared filters; an unknown type is 400, an unknown or invisible device 404, as the report does. */
export async function parseEventFilter(
  db: Db,
  scope: AccessScope,
  timeZone: string,
  query: { types?: string; deviceIds?: string; from?: string; to?: string },
): Promise<EventFilter> {
  const filter: EventFilter = {};
  const types = commaList(query.types, 'types');
  if (types) filter.types = parseEventTypePatterns(types);
  const imeis = commaList(query.deviceIds, 'deviceIds');
  if (imeis) {
    const devices = await visibleDevicesByImei(db, scope, imeis);
    const missing = imeis.find((imei) => !devices.some((d) => d.imei === imei));
    if (missing !== undefined) throw new ApiError(404, `Device not found or no access: ${missing}`);
    filter.deviceIds = devices.map((d) => d.id);
  }
  if (query.from !== undefined) filter.from = parseBound(query.from, 'from', timeZone, false);
  if (query.to !== undefined) filter.to = parseBound(query.to, 'to', timeZone, true);
  if (filter.from && filter.to && filter.from > filter.to) throw new ApiError(400, 'from must not be after to');
  return filter;
}

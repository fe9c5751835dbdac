import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { deleteGeofence, findGeofence, geofencesOf, insertGeofence, updateGeofence } from '../../db/geofences.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { GeofenceBody, GeofencePatchBody, shapeOfBody } from '../geofences/geofence-body.ts';
import type { RouteDeps } from '../route-deps.ts';
import { GeofenceSchema, geofenceView } from '../views/geofence-view.ts';

const listGeofences = createRoute({
  method: 'get',
  path: '/geofences',
  tags: ['Geofences'],
  summary: 'Every geofence of the account in the key\'s mode, alphabetically by name',
  description: 'Geofences belong to the account in one mode, like vehicles: every user of the account sees the same list with a live key, and another list, the test geofences, with a test key. A geofence is created in the mode of the key that creates it; a key of the other mode neither sees nor changes it (404), and the engine matches it only to vehicles of its mode.',
  middleware: [requirePermission('geofences:read')] as const,
  responses: {
    200: { description: 'Geofences', content: { 'application/json': { schema: envelopeSchema(z.array(GeofenceSchema), 'GeofenceList') } } },
    ...errorResponses(),
  },
});

const id = z.coerce.number().int().min(1).max(2_147_483_647).openapi({ param: { name: 'id', in: 'path' }, example: 12 });
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const jsonWithExamples = <T extends z.ZodType>(schema: T, examples: Record<string, { summary: string; value: unknown }>) => ({ 'application/json': { schema, examples } });

const CREATE_EXAMPLES = {
  circle: { summary: 'A circle of 250 m', value: { name: 'Depot North', type: 'circle', center: { lat: 19.4326, lng: -99.1332 }, radiusMeters: 250, enterDwellSeconds: 30 } },
  polygon: {
    summary: 'A polygon (closed for you)',
    value: { name: 'Yard', type: 'polygon', vertices: [{ lat: 19.4, lng: -99.1 }, { lat: 19.4, lng: -99.09 }, { lat: 19.41, lng: -99.09 }, { lat: 19.41, lng: -99.1 }] },
  },
  geojson: {
    summary: 'A GeoJSON MultiPolygon ([lng, lat], rings closed)',
    value: { name: 'Two lots', geometry: { type: 'MultiPolygon', coordinates: [[[[-99.2, 19.2], [-99.1, 19.2], [-99.1, 19.3], [-99.2, 19.2]]], [[[-99.0, 19.0], [-98.99, 19.0], [-98.99, 19.01], [-99.0, 19.0]]]] } },
  },
};
const PATCH_EXAMPLES = {
  rename: { summary: 'A new name only', value: { name: 'Depot North (old)' } },
  dwell: { summary: 'Debounce exits by 2 minutes', value: { exitDwellSeconds: 120 } },
  reshape: { summary: 'A new shape, replacing the old one whole', value: { type: 'circle', center: { lat: 19.44, lng: -99.14 }, radiusMeters: 400 } },
};
const SHAPES = [
  'A circle `{"name", "type": "circle", "center": {"lat", "lng"}, "radiusMeters"}` (more than 0, at most 100 km), a polygon `{"name", "type": "polygon", "vertices": [{"lat", "lng"}, ...]}` (at least 3 distinct vertices in order around the area, edges not crossing; closed for you, a repeated vertex dropped), or a GeoJSON `{"name", "geometry": {Polygon or MultiPolygon}}` ([lng, lat] positions, closed rings, valid to PostGIS), never both `type` and `geometry`.',
  'Latitudes -90..90, longitudes -180..180; a polygon may not cross the antimeridian (±180°). Names are trimmed, 1 to 200 characters, unique among the account\'s geofences of the key\'s mode and case-sensitive (travels name them).',
  'The geofence is created in the mode of the key (live or test): only keys of that mode see, change or name it, and the engine matches it only to vehicles of that mode.',
  '`enterDwellSeconds` / `exitDwellSeconds` (0 to 86400, default 0): how long a vehicle must stay inside (outside) before its enter (exit) counts. The engine uses a created or changed geofence for fixes that arrive a second later.',
].join('\n\n');

const createGeofence = createRoute({
  method: 'post',
  path: '/geofences',
  tags: ['Geofences'],
  summary: 'Create a circular or polygonal geofence',
  description: SHAPES,
  middleware: [requirePermission('geofences:write')] as const,
  request: { body: { content: jsonWithExamples(GeofenceBody, CREATE_EXAMPLES), required: true } },
  responses: {
    201: { description: 'The geofence', content: json(envelopeSchema(GeofenceSchema, 'GeofenceCreated')) },
    ...errorResponses(
      [400, 'Invalid shape (fewer than 3 vertices, crossing edges, coordinates out of range, radius not in (0, 100 km]) or field'],
      [409, 'A geofence of the account in this mode already has this name'],
      [413, 'Body too large'],
      [415, 'Not JSON'],
    ),
  },
});

const getGeofence = createRoute({
  method: 'get',
  path: '/geofences/{id}',
  tags: ['Geofences'],
  summary: 'One geofence',
  middleware: [requirePermission('geofences:read')] as const,
  request: { params: z.object({ id }) },
  responses: {
    200: { description: 'The geofence', content: json(envelopeSchema(GeofenceSchema, 'GeofenceResponse')) },
    ...errorResponses([400, 'Invalid id'], [404, 'No such geofence in the account and mode']),
  },
});

const patchGeofence = createRoute({
  method: 'patch',
  path: '/geofences/{id}',
  tags: ['Geofences'],
  summary: 'Rename, reshape or change the dwell times of a geofence',
  description: `Only the fields given change (an empty body changes nothing); a shape replaces the old one whole. The travels that already name the geofence keep the name they were given.\n\n${SHAPES}`,
  middleware: [requirePermission('geofences:write')] as const,
  request: { params: z.object({ id }), body: { content: jsonWithExamples(GeofencePatchBody, PATCH_EXAMPLES), required: true } },
  responses: {
    200: { description: 'The geofence', content: json(envelopeSchema(GeofenceSchema, 'GeofenceUpdated')) },
    ...errorResponses([400, 'Invalid shape or field'], [404, 'No such geofence in the account and mode'], [409, 'Another geofence of the mode has this name'], [413, 'Body too large'], [415, 'Not JSON']),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/geofences/{id}',
  tags: ['Geofences'],
  summary: 'Delete a geofence with its crossings and visits',
  description: [
    'Answers 200 with `{"id", "deleted": true}`. The geofence\'s recorded crossings and visits go with it (the geofence report no longer shows them); the event log keeps the events already logged. A vehicle inside it at the time gets no exit event.',
    'Refused (409, naming the travels) while a Scheduled or In progress travel still has a pending waypoint there: that waypoint could never be reached; cancel the travel first. Waypoints already completed, and the waypoints of finished or cancelled travels, keep the geofence\'s name.',
  ].join('\n\n'),
  middleware: [requirePermission('geofences:write')] as const,
  request: { params: z.object({ id }) },
  responses: {
    200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.number().int().openapi({ example: 12 }), deleted: z.literal(true) }), 'GeofenceDeleted')) },
    ...errorResponses([400, 'Invalid id'], [404, 'No such geofence in the account and mode'], [409, 'A pending waypoint of a Scheduled or In progress travel']),
  },
});

export function geofenceRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(listGeofences, async (c) => {
    const rows = await geofencesOf(db, c.get('principal').scope);
    return c.json(envelope(rows.map(geofenceView)), 200);
  });

  app.openapi(createGeofence, async (c) => {
    const body = c.req.valid('json');
    const shape = shapeOfBody(body);
    if (!shape) throw new ApiError(400, 'give type (circle or polygon) with its fields, or a GeoJSON geometry');
    const { scope } = c.get('principal');
    const row = await insertGeofence(db, {
      accountId: scope.accountId, mode: scope.mode, name: body.name, shape,
      enterDwellSeconds: body.enterDwellSeconds, exitDwellSeconds: body.exitDwellSeconds,
    });
    return c.json(envelope(geofenceView(row)), 201);
  });

  app.openapi(getGeofence, async (c) => {
    const geofenceId = c.req.valid('param').id;
    const row = await findGeofence(db, c.get('principal').scope, geofenceId);
    if (!row) throw new ApiError(404, `Geofence not found: ${geofenceId}`);
    return c.json(envelope(geofenceView(row)), 200);
  });

  app.openapi(patchGeofence, async (c) => {
    const geofenceId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const row = await updateGeofence(db, c.get('principal').scope, geofenceId, {
      name: body.name, shape: shapeOfBody(body), enterDwellSeconds: body.enterDwellSeconds, exitDwellSeconds: body.exitDwellSeconds,
    });
    if (!row) throw new ApiError(404, `Geofence not found: ${geofenceId}`);
    return c.json(envelope(geofenceView(row)), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const geofenceId = c.req.valid('param').id;
    if (!(await deleteGeofence(db, c.get('principal').scope, geofenceId))) throw new ApiError(404, `Geofence not found: ${geofenceId}`);
    return c.json(envelope({ id: geofenceId, deleted: true as const }), 200);
  });
  return app;
}

import { z } from '@hono/zod-openapi';
import { kinks, polygon as turfPolygon } from '@turf/turf';
import type { GeofenceShape } from '../../db/geofences.ts';
import { ApiError } from '../api-error.ts';

const LatLng = z.object({ lat: z.number().openapi({ example: 19.4326 }), lng: z.number().openapi({ example: -99.1332 }) }).openapi('LatLng');
const dwell = (what: string) => z.number().int().min(0).max(86_400).optional().openapi({ description: `${what}, 0 to 86400 (0: at once; the default)` });

/** One flat body for all three forms, so a mistake gets a message about the field, not about a union. */
export const GeofenceBody = z
  .object({
    name: z.string().max(200).openapi({ example: 'Depot North' }),
    type: z.enum(['circle', 'polygon']).optional().openapi({ description: 'circle (center, radiusMeters) or polygon (vertices); omit when giving geometry' }),
    center: LatLng.optional(),
    radiusMeters: z.number().optional().openapi({ description: 'Circle radius, more than 0 and at most 100000', example: 250 }),
    vertices: z.array(LatLng).max(10_000).optional().openapi({ description: 'Polygon corners in order, at least 3 distinct, not crossing; closing it (repeating the first) is optional' }),
    geometry: z
      .object({ type: z.enum(['Polygon', 'MultiPolygon']), coordinates: z.array(z.unknown()) })
      .optional()
      .openapi({ description: 'A GeoJSON Polygon or MultiPolygon ([lng, lat] positions), instead of type', example: { type: 'Polygon', coordinates: [[[-99.14, 19.43], [-99.13, 19.43], [-99.13, 19.44], [-99.14, 19.43]]] } }),
    enterDwellSeconds: dwell('How long a vehicle must stay inside before its enter counts'),
    exitDwellSeconds: dwell('How long a vehicle must stay outside before its exit counts'),
  })
  .openapi('GeofenceCreate');

export const GeofencePatchBody = GeofenceBody.partial().openapi('GeofenceUpdate');

type Body = z.infer<typeof GeofencePatchBody>;

function polygonFromVertices(vertices: Array<{ lat: number; lng: number }>): GeofenceShape {
  vertices.forEach((v, i) => {
    if (!(Math.abs(v.lat) <= 90)) throw new ApiError(400, `vertices.${i}.lat must be between -90 and 90, got ${v.lat}`);
    if (!(Math.abs(v.lng) <= 180)) throw new ApiError(400, `vertices.${i}.lng must be between -180 and 180, got ${v.lng}`);
  });
  const open = vertices.length > 1 && vertices[0]!.lat === vertices[vertices.length - 1]!.lat && vertices[0]!.lng === vertices[vertices.length - 1]!.lng ? vertices.slice(0, -1) : vertices;
  const distinct = new Set(open.map((v) => `${v.lat},${v.lng}`)).size;
  if (distinct < 3) throw new ApiError(400, `a polygon needs at least 3 distinct vertices, got ${distinct}`);
  const ring = [...open, open[0]!].map((v) => [v.lng, v.lat]);
  const crossings = kinks(turfPolygon([ring])).features;
  if (crossings.length > 0) {
    const [lng, lat] = crossings[0]!.geometry.coordinates;
    throw new ApiError(400, `the polygon's edges cross themselves near lat ${lat!.toFixed(6)}, lng ${lng!.toFixed(6)}; list the vertices in order around the area`);
  }
  return { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } };
}

/** The shape a body describes, or undefined when it describes none (a PATCH that keeps the shape). */
export function shapeOfBody(body: Body): GeofenceShape | undefined {
  const shapeFields = body.center !== undefined || body.radiusMeters !== undefined || body.vertices !== undefined;
  if (body.geometry !== undefined) {
    if (body.type !== undefined || shapeFields) throw new ApiError(400, 'give either geometry, or type with its fields, not both');
    return { kind: 'polygon', geometry: body.geometry };
  }
  if (body.type === 'circle') {
    if (body.vertices !== undefined) throw new ApiError(400, 'a circle takes center and radiusMeters, not vertices');
    if (!body.center) throw new ApiError(400, 'center is required for a circle');
    if (body.radiusMeters === undefined) throw new ApiError(400, 'radiusMeters is required for a circle');
    return { kind: 'circle', lat: body.center.lat, lng: body.center.lng, radiusMeters: body.radiusMeters };
  }
  if (body.type === 'polygon') {
    if (body.center !== undefined || body.radiusMeters !== undefined) throw new ApiError(400, 'a polygon takes vertices, not center or radiusMeters');
    if (!body.vertices) throw new ApiError(400, 'vertices is required for a polygon');
    return polygonFromVertices(body.vertices);
  }
  if (shapeFields) throw new ApiError(400, 'type is required with center, radiusMeters or vertices: circle or polygon');
  return undefined;
}

import { z } from '@hono/zod-openapi';
import { area, kinks, polygon as turfPolygon } from '@turf/turf';
import type { GeofenceShape } from '../../db/geofences.ts';
import { ApiError } from '../api-error.ts';
import { LatLngSchema } from '../views/rounded-fields.ts';

// The shape answers use too: a position given with more decimals is stored as given and answered to 7.
const LatLng = LatLngSchema;
const NAME_LENGTH = 'name must be 1 to 200 characters';
const dwell = (what: string) => z.number().int().min(0).max(86_400).optional().openapi({ description: `${what}, 0 to 86400 (0: at once; the default)` });

/** One flat body for all three forms, so a mistake gets a message about the field, not about a union. */
export const GeofenceBody = z
  .object({
    // Trimmed first, as the database layer does, so the limits apply to what is stored.
    name: z.string().trim().min(1, NAME_LENGTH).max(200, NAME_LENGTH).openapi({ description: 'Unique among the account\'s geofences of the key\'s mode, exact and case-sensitive (travels name it)', example: 'Depot North' }),
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

type LatLng = { lat: number; lng: number };
const same = (a: LatLng, b: LatLng) => a.lat === b.lat && a.lng === b.lng;

function polygonFromVertices(vertices: LatLng[]): GeofenceShape {
  vertices.forEach((v, i) => {
    if (!(Math.abs(v.lat) <= 90)) throw new ApiError(400, `vertices.${i}.lat must be between -90 and 90, got ${v.lat}`);
    if (!(Math.abs(v.lng) <= 180)) throw new ApiError(400, `vertices.${i}.lng must be between -180 and 180, got ${v.lng}`);
  });
  // A vertex repeating the one before adds no corner (the closing repeat is one such): dropped, so a ring
  // given closed or open, or with a double click in it, is the same polygon.
  const corners: LatLng[] = [];
  for (const v of vertices) if (corners.length === 0 || !same(corners[corners.length - 1]!, v)) corners.push(v);
  while (corners.length > 1 && same(corners[0]!, corners[corners.length - 1]!)) corners.pop();
  const distinct = new Set(corners.map((v) => `${v.lat},${v.lng}`)).size;
  if (distinct < 3) throw new ApiError(400, `a polygon needs at least 3 distinct vertices, got ${distinct}`);
  const ring = [...corners, corners[0]!].map((v) => [v.lng, v.lat]);
  const polygon = turfPolygon([ring]);
  const crossings = kinks(polygon).features;
  if (crossings.length > 0) {
    const [lng, lat] = crossings[0]!.geometry.coordinates;
    throw new ApiError(400, `the polygon's edges cross themselves near lat ${lat!.toFixed(6)}, lng ${lng!.toFixed(6)}; list the vertices in order around the area`);
  }
  // After the crossing check: a bow tie's two lobes can cancel out to no area.
  if (area(polygon) < 1) throw new ApiError(400, 'the polygon encloses less than 1 m²: its vertices lie on one line or almost on one point');
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

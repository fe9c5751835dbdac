import { z } from '@hono/zod-openapi';
import type { Geofence } from '../../db/schema.ts';
import { roundCoordinate, roundMetres } from '../../domain/display-precision.ts';
import { latitude, longitude, metres } from './rounded-fields.ts';

export const GeofenceSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: 'Warehouse North' }),
    centerLat: latitude("The circle's centre, or the polygon's centroid", 19.405),
    centerLng: longitude("The circle's centre, or the polygon's centroid", -99.095),
    radiusMeters: metres("A circle's radius; for a polygon, the distance from its centroid to its farthest vertex", 766.4),
    vertexCount: z.number().int(),
    vertices: z.array(z.object({ lat: latitude(), lng: longitude() })).openapi({
      description: 'Outer ring of the polygon (of its largest part for a multipolygon), without repeating the first vertex; 7 decimals, so a vertex given as 19.3687 reads 19.3687',
    }),
    type: z.enum(['circle', 'polygon']),
    enterDwellSeconds: z.number().int().openapi({ description: 'How long a vehicle must stay inside before its enter counts (0: at once)' }),
    exitDwellSeconds: z.number().int().openapi({ description: 'How long a vehicle must stay outside before its exit counts (0: at once)' }),
  })
  .openapi('Geofence', {
    example: {
      id: 12, name: 'Yard', centerLat: 19.405, centerLng: -99.095, radiusMeters: 766.4, vertexCount: 4,
      vertices: [{ lat: 19.4, lng: -99.1 }, { lat: 19.4, lng: -99.09 }, { lat: 19.41, lng: -99.09 }, { lat: 19.41, lng: -99.1 }],
      type: 'polygon', enterDwellSeconds: 0, exitDwellSeconds: 120,
    },
  });

export function geofenceView(g: Geofence): z.infer<typeof GeofenceSchema> {
  return {
    id: g.id,
    name: g.name,
    centerLat: roundCoordinate(g.center_lat),
    centerLng: roundCoordinate(g.center_lng),
    radiusMeters: roundMetres(g.radius_m),
    vertexCount: g.vertex_count,
    vertices: g.vertices.map((v) => ({ lat: roundCoordinate(v.lat), lng: roundCoordinate(v.lng) })),
    type: g.kind,
    enterDwellSeconds: g.enter_dwell_s,
    exitDwellSeconds: g.exit_dwell_s,
  };
}

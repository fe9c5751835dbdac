import { z } from '@hono/zod-openapi';
import type { Geofence } from '../../db/schema.ts';

export const GeofenceSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: 'Warehouse North' }),
    centerLat: z.number(),
    centerLng: z.number(),
    radiusMeters: z.number().openapi({ description: "A circle's radius; for a polygon, the distance from its centroid to its farthest vertex" }),
    vertexCount: z.number().int(),
    vertices: z.array(z.object({ lat: z.number(), lng: z.number() })).openapi({
      description: 'Outer ring of the polygon (of its largest part for a multipolygon), without repeating the first vertex',
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
    centerLat: g.center_lat,
    centerLng: g.center_lng,
    radiusMeters: Math.round(g.radius_m * 10) / 10,
    vertexCount: g.vertex_count,
    vertices: g.vertices,
    type: g.kind,
    enterDwellSeconds: g.enter_dwell_s,
    exitDwellSeconds: g.exit_dwell_s,
  };
}

import { z } from '@hono/zod-openapi';
import type { PositionRow } from '../../db/position-history.ts';
import { roundCoordinate } from '../../domain/display-precision.ts';
import { COORDINATE_PRECISION } from '../views/rounded-fields.ts';
import { PositionPropertiesSchema, positionProperties } from './position-view.ts';

/** RFC 7946 position: longitude first. */
const Coordinates = z.array(z.number()).min(2).max(2).openapi({ description: `[longitude, latitude] (RFC 7946 order), ${COORDINATE_PRECISION}`, example: [-99.1332, 19.4326] });

const TrackFeatureSchema = z
  .object({
    type: z.literal('Feature'),
    geometry: z.object({ type: z.literal('LineString'), coordinates: z.array(Coordinates).min(2) }),
    properties: z.object({
      kind: z.literal('track'),
      points: z.number().int().openapi({ description: 'Positions in the line', example: 1440 }),
    }),
  })
  .openapi('TrackFeature');

const FixFeatureSchema = z
  .object({
    type: z.literal('Feature'),
    geometry: z.object({ type: z.literal('Point'), coordinates: Coordinates }),
    properties: PositionPropertiesSchema,
  })
  .openapi('FixFeature');

export const PositionFeatureCollectionSchema = z
  .object({
    type: z.literal('FeatureCollection'),
    features: z.array(z.union([TrackFeatureSchema, FixFeatureSchema])).openapi({
      description: 'First the track (a LineString of the valid fixes; absent with fewer than two), then one Point per fix with its properties',
    }),
  })
  .openapi('PositionFeatureCollection');

type FeatureCollection = z.infer<typeof PositionFeatureCollectionSchema>;

const coordinates = (f: PositionRow) => [roundCoordinate(f.longitude), roundCoordinate(f.latitude)];

/**
 * A FeatureCollection for map libraries: the track as one LineString of the valid fixes (when there
 * are two or more), then every given fix as a Point carrying its fields. Coordinates are 2D; the
 * altitude is a property, so no line mixes 2D and 3D positions.
 */
export function positionFeatureCollection(fixes: PositionRow[]): FeatureCollection {
  const features: FeatureCollection['features'] = [];
  const line = fixes.filter((f) => f.valid).map(coordinates);
  if (line.length >= 2) {
    features.push({ type: 'Feature', geometry: { type: 'LineString', coordinates: line }, properties: { kind: 'track', points: line.length } });
  }
  for (const f of fixes) {
    features.push({ type: 'Feature', geometry: { type: 'Point', coordinates: coordinates(f) }, properties: positionProperties(f) });
  }
  return { type: 'FeatureCollection', features };
}

import type { GeofenceShape } from '../db/geofences.ts';

export interface GeofenceFeature {
  name: string;
  shape: GeofenceShape;
}

export class GeoJsonError extends Error {
  override name = 'GeoJsonError';
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function featureList(doc: unknown): Json[] {
  if (!isObject(doc)) throw new GeoJsonError('the file is not a GeoJSON object');
  if (doc.type === 'FeatureCollection') {
    if (!Array.isArray(doc.features)) throw new GeoJsonError('FeatureCollection has no features array');
    return doc.features as Json[];
  }
  if (doc.type === 'Feature') return [doc];
  throw new GeoJsonError(`expected a FeatureCollection or a Feature, got ${String(doc.type)}`);
}

/**
 * Reads geofences from GeoJSON: Polygon and MultiPolygon features, and Point features with a
 * `radius` property in metres (circles). Each feature needs a `name` property.
 */
export function geofencesFromGeoJson(doc: unknown): GeofenceFeature[] {
  return featureList(doc).map((feature, index) => {
    const where = `feature ${index + 1}`;
    if (!isObject(feature) || feature.type !== 'Feature') throw new GeoJsonError(`${where} is not a GeoJSON Feature`);
    const properties = isObject(feature.properties) ? feature.properties : {};
    const name = typeof properties.name === 'string' ? properties.name.trim() : '';
    if (!name) throw new GeoJsonError(`${where} has no "name" property`);
    const geometry = feature.geometry;
    if (!isObject(geometry)) throw new GeoJsonError(`${where} (${name}) has no geometry`);
    if (geometry.type === 'Polygon' || geometry.type === 'MultiPolygon') {
      return { name, shape: { kind: 'polygon', geometry: { type: geometry.type, coordinates: geometry.coordinates } } };
    }
    if (geometry.type === 'Point') {
      const [lng, lat] = Array.isArray(geometry.coordinates) ? (geometry.coordinates as unknown[]) : [];
      const radius = Number(properties.radius);
      if (typeof lat !== 'number' || typeof lng !== 'number') throw new GeoJsonError(`${where} (${name}) has no [lng, lat] coordinates`);
      if (!Number.isFinite(radius) || radius <= 0) {
        throw new GeoJsonError(`${where} (${name}) is a Point: it needs a positive "radius" property in metres to be a circle`);
      }
      return { name, shape: { kind: 'circle', lat, lng, radiusMeters: radius } };
    }
    throw new GeoJsonError(`${where} (${name}) is a ${String(geometry.type)}; only Polygon, MultiPolygon and Point with radius are geofences`);
  });
}

import { describe, expect, it } from 'vitest';
import { GeoJsonError, geofencesFromGeoJson } from './geojson-geofences.ts';

const ring = [[-99.2, 19.4], [-99.1, 19.4], [-99.1, 19.5], [-99.2, 19.5], [-99.2, 19.4]];
const polygon = { type: 'Polygon', coordinates: [ring] };
const multiPolygon = {
  type: 'MultiPolygon',
  coordinates: [[ring], [[[-98, 19], [-97.9, 19], [-97.9, 19.1], [-98, 19], [-98, 19]]]],
};

const feature = (geometry: unknown, properties: unknown) => ({ type: 'Feature', geometry, properties });
const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });

/** The GeoJsonError message `run` throws; fails the test when it throws nothing or something else. */
function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GeoJsonError);
    return (error as Error).message;
  }
  throw new Error('expected a GeoJsonError, nothing was thrown');
}

describe('geofencesFromGeoJson', () => {
  it('reads a FeatureCollection of a Polygon, a MultiPolygon and a Point with radius (a circle)', () => {
    const doc = collection(
      feature(polygon, { name: 'Depot' }),
      feature(multiPolygon, { name: 'Two Yards', colour: 'red' }),
      feature({ type: 'Point', coordinates: [-99.195, 19.433] }, { name: 'Customer', radius: 250 }),
    );
    expect(geofencesFromGeoJson(doc)).toEqual([
      { name: 'Depot', shape: { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } } },
      { name: 'Two Yards', shape: { kind: 'polygon', geometry: { type: 'MultiPolygon', coordinates: multiPolygon.coordinates } } },
      { name: 'Customer', shape: { kind: 'circle', lat: 19.433, lng: -99.195, radiusMeters: 250 } },
    ]);
  });

  it('reads a single Feature as one geofence', () => {
    expect(geofencesFromGeoJson(feature(polygon, { name: 'Only' }))).toEqual([
      { name: 'Only', shape: { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } } },
    ]);
  });

  it('keeps GeoJSON [lng, lat] order apart: lat is the second coordinate', () => {
    const [circle] = geofencesFromGeoJson(feature({ type: 'Point', coordinates: [10, 50, 123] }, { name: 'C', radius: 1 }));
    expect(circle?.shape).toEqual({ kind: 'circle', lat: 50, lng: 10, radiusMeters: 1 });
  });

  it('trims the name and accepts a numeric-string radius', () => {
    const [circle] = geofencesFromGeoJson(feature({ type: 'Point', coordinates: [1, 2] }, { name: '  Gate 4 ', radius: '75.5' }));
    expect(circle).toEqual({ name: 'Gate 4', shape: { kind: 'circle', lat: 2, lng: 1, radiusMeters: 75.5 } });
  });

  it('returns nothing for an empty FeatureCollection', () => {
    expect(geofencesFromGeoJson(collection())).toEqual([]);
  });

  it('rejects a feature without a name, saying which feature', () => {
    expect(errorOf(() => geofencesFromGeoJson(collection(feature(polygon, { name: 'A' }), feature(polygon, {}))))).toMatch(
      /feature 2 has no "name"/,
    );
    expect(errorOf(() => geofencesFromGeoJson(feature(polygon, null)))).toMatch(/feature 1 has no "name"/);
    expect(errorOf(() => geofencesFromGeoJson(feature(polygon, { name: '   ' })))).toMatch(/no "name"/);
    expect(errorOf(() => geofencesFromGeoJson(feature(polygon, { name: 42 })))).toMatch(/no "name"/);
  });

  it('rejects a Point without a positive radius: it needs one to be a circle', () => {
    const point = { type: 'Point', coordinates: [-99.1, 19.4] };
    for (const properties of [{ name: 'P' }, { name: 'P', radius: 0 }, { name: 'P', radius: -5 }, { name: 'P', radius: 'wide' }, { name: 'P', radius: null }]) {
      expect(errorOf(() => geofencesFromGeoJson(feature(point, properties)))).toMatch(/feature 1 \(P\) is a Point: it needs a positive "radius"/);
    }
  });

  it('rejects a Point without [lng, lat] coordinates', () => {
    expect(errorOf(() => geofencesFromGeoJson(feature({ type: 'Point', coordinates: ['a', 'b'] }, { name: 'P', radius: 5 })))).toMatch(
      /\(P\) has no \[lng, lat\] coordinates/,
    );
    expect(errorOf(() => geofencesFromGeoJson(feature({ type: 'Point' }, { name: 'P', radius: 5 })))).toMatch(/coordinates/);
  });

  it('rejects a LineString and other non-area geometries by name', () => {
    const line = feature({ type: 'LineString', coordinates: [[0, 0], [1, 1]] }, { name: 'Road' });
    expect(errorOf(() => geofencesFromGeoJson(collection(feature(polygon, { name: 'Ok' }), line)))).toMatch(
      /feature 2 \(Road\) is a LineString; only Polygon, MultiPolygon and Point with radius/,
    );
    expect(errorOf(() => geofencesFromGeoJson(feature({ type: 'MultiPoint', coordinates: [[0, 0]] }, { name: 'M' })))).toMatch(/MultiPoint/);
  });

  it('rejects a feature without geometry', () => {
    expect(errorOf(() => geofencesFromGeoJson(feature(null, { name: 'Nowhere' })))).toMatch(/feature 1 \(Nowhere\) has no geometry/);
  });

  it('rejects documents that are not a FeatureCollection or a Feature', () => {
    expect(errorOf(() => geofencesFromGeoJson(null))).toMatch(/not a GeoJSON object/);
    expect(errorOf(() => geofencesFromGeoJson([polygon]))).toMatch(/not a GeoJSON object/);
    expect(errorOf(() => geofencesFromGeoJson(polygon))).toMatch(/expected a FeatureCollection or a Feature, got Polygon/);
    expect(errorOf(() => geofencesFromGeoJson({ type: 'FeatureCollection' }))).toMatch(/no features array/);
    expect(errorOf(() => geofencesFromGeoJson(collection(polygon)))).toMatch(/feature 1 is not a GeoJSON Feature/);
    expect(errorOf(() => geofencesFromGeoJson(collection('x')))).toMatch(/feature 1 is not a GeoJSON Feature/);
  });
});

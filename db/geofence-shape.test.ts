import { describe, expect, it } from 'vitest';
import { checkGeofenceShape, type GeofenceShape } from './geofence-shape.ts';

const polygon = (coordinates: unknown): GeofenceShape => ({ kind: 'polygon', geometry: { type: 'Polygon', coordinates } });
const multi = (coordinates: unknown): GeofenceShape => ({ kind: 'polygon', geometry: { type: 'MultiPolygon', coordinates } });
const circle = (lat: number, lng: number, radiusMeters: number): GeofenceShape => ({ kind: 'circle', lat, lng, radiusMeters });
const ring = [[0, 0], [1, 0], [1, 1], [0, 0]];

describe('checkGeofenceShape', () => {
  it.each([
    ['a circle of 100 km exactly', circle(19.4, -99.1, 100_000)],
    ['a circle at the extremes of range', circle(-90, 180, 0.5)],
    ['a polygon with a hole', polygon([[[0, 0], [4, 0], [4, 4], [0, 0]], [[2, 1], [3, 1], [3, 2], [2, 1]]])],
    ['positions with an altitude', polygon([[[0, 0, 5], [1, 0, 5], [1, 1, 5], [0, 0, 5]]])],
    ['a MultiPolygon', multi([[ring], [[[5, 5], [6, 5], [6, 6], [5, 5]]]])],
  ])('accepts %s', (_, shape) => {
    expect(() => checkGeofenceShape(shape)).not.toThrow();
  });

  it.each([
    ['a center latitude out of range', circle(90.5, 0, 10), /center\.lat must be between -90 and 90, got 90.5/],
    ['a center longitude out of range', circle(0, -181, 10), /center\.lng must be between -180 and 180, got -181/],
    ['a radius of 0', circle(0, 0, 0), /radiusMeters must be more than 0 and at most 100000 \(100 km\), got 0/],
    ['a radius over 100 km', circle(0, 0, 100_000.5), /at most 100000 \(100 km\), got 100000.5/],
    ['a radius that is not a number', circle(0, 0, Number.NaN), /radiusMeters must be more than 0/],
    ['a Polygon without rings', polygon([]), /geometry\.coordinates must be a polygon/],
    ['a ring that is not an array', polygon([{ lng: 0, lat: 0 }]), /geometry\.coordinates\.0 must be a ring/],
    ['a position of strings', polygon([[['a', 0], [1, 0], [1, 1], ['a', 0]]]), /geometry\.coordinates\.0\.0 must be a position \[lng, lat\].*got \["a",0\]/],
    ['a position of one number', polygon([[[0], [1, 0], [1, 1], [0]]]), /geometry\.coordinates\.0\.0 must be a position/],
    ['a latitude out of range', polygon([[[0, 0], [1, 95], [1, 1], [0, 0]]]), /geometry\.coordinates\.0\.1 has latitude 95, outside -90\.\.90/],
    ['a longitude out of range', polygon([[[0, 0], [200, 0], [1, 1], [0, 0]]]), /geometry\.coordinates\.0\.1 has longitude 200, outside -180\.\.180/],
    ['a ring of 3 positions', polygon([[[0, 0], [1, 1], [0, 0]]]), /geometry\.coordinates\.0 has 3 positions; a ring needs at least 4/],
    ['a ring not closed', polygon([[[0, 0], [1, 0], [1, 1], [0, 1]]]), /geometry\.coordinates\.0 is not closed/],
    ['an empty MultiPolygon', multi([]), /must be a MultiPolygon: an array of at least one polygon/],
    ['a bad part of a MultiPolygon', multi([[ring], [[[0, 0], [1, 0], [1, 1], [0, 1]]]]), /geometry\.coordinates\.1\.0 is not closed/],
    ['another geometry type', { kind: 'polygon', geometry: { type: 'LineString', coordinates: [] } } as unknown as GeofenceShape, /geometry\.type must be Polygon or MultiPolygon, got LineString/],
  ])('refuses %s, saying where', (_, shape, message) => {
    expect(() => checkGeofenceShape(shape)).toThrow(message);
  });
});

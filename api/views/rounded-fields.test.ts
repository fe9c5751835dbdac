import { OpenAPIHono, createRoute, type z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { PositionSchema } from '../positions/position-view.ts';
import { DeviceStatusSchema } from './device-status-view.ts';
import { GeofenceSchema } from './geofence-view.ts';
import { TripReportSchema } from './trip-report-view.ts';

/** The components of an OpenAPI document holding these schemas, as the app's document renders them. */
function components(schemas: z.ZodType[]): Record<string, any> {
  const app = new OpenAPIHono();
  schemas.forEach((schema, i) => {
    const route = createRoute({ method: 'get', path: `/s${i}`, responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } });
    app.openapi(route, (c) => c.json({}, 200) as never);
  });
  return app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'fleetcore', version: '1' } }).components!.schemas!;
}

describe('the OpenAPI document', () => {
  it('says the precision of every rounded number it describes', () => {
    const c = components([GeofenceSchema, DeviceStatusSchema, PositionSchema, TripReportSchema]);
    const description = (schema: string, ...path: string[]) => path.reduce((node, key) => node[key], c[schema]).description as string;
    for (const [schema, path, precision] of [
      ['Geofence', ['properties', 'centerLat'], '7 decimals'],
      ['Geofence', ['properties', 'vertices', 'items', 'properties', 'lat'], '7 decimals'],
      ['Geofence', ['properties', 'radiusMeters'], 'metres, 1 decimal'],
      ['DeviceStatus', ['properties', 'longitude'], '7 decimals'],
      ['DeviceStatus', ['properties', 'powerVoltage'], 'volts to 2 decimals'],
      ['Position', ['properties', 'lat'], '7 decimals'],
      ['Position', ['properties', 'speedKmh'], 'km/h, 1 decimal'],
      ['Position', ['properties', 'odometerKm'], 'km, 3 decimals'],
      ['Trip', ['properties', 'distanceKm'], 'km, 3 decimals'],
      ['Trip', ['properties', 'averageSpeedKmh'], 'km/h, 1 decimal'],
      ['LatLng', ['properties', 'lng'], '7 decimals'],
    ] as const) {
      expect(description(schema, ...path), `${schema}.${path.join('.')}`).toContain(precision);
    }
  });
});

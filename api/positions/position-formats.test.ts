import { describe, expect, it } from 'vitest';
import type { PositionRow } from '../../db/position-history.ts';
import { positionCsvLine } from './position-csv.ts';
import { positionFeatureCollection } from './position-geojson.ts';
import { positionProperties, positionView } from './position-view.ts';

// A fix as stored from a GT06 tracker (minutes / 30000 / 60) and an OsmAnd phone (knots × 1.852).
const noisy: PositionRow = {
  fix_time: new Date('2024-05-01T14:30:05Z'), valid: true, latitude: 19.432600000000001, longitude: -99.13320000000002,
  altitude: 2240.04999, speed_kmh: 42.59600000000001, heading: 90.04, satellites: 11, ignition: true,
  attributes: '{"odometer":12345678.4,"rssi":23}',
};

describe('the position history formats', () => {
  it('answer the same rounded numbers in JSON, GeoJSON and CSV; the attributes as the tracker sent them', () => {
    expect(positionView(noisy, 'America/Mexico_City')).toEqual({
      fixTime: '2024-05-01T08:30:05-06:00', lat: 19.4326, lng: -99.1332, speedKmh: 42.6, heading: 90, altitude: 2240,
      satellites: 11, ignition: true, odometerKm: 12345.678, valid: true, attributes: { odometer: 12345678.4, rssi: 23 },
    });
    const collection = positionFeatureCollection([noisy, { ...noisy, fix_time: new Date('2024-05-01T14:30:10Z') }]);
    expect(collection.features[0]!.geometry.coordinates).toEqual([[-99.1332, 19.4326], [-99.1332, 19.4326]]);
    expect(collection.features[1]!.geometry.coordinates).toEqual([-99.1332, 19.4326]);
    expect(collection.features[1]!.properties).toEqual(positionProperties(noisy));
    expect(positionProperties(noisy)).toMatchObject({ speedKmh: 42.6, heading: 90, altitude: 2240, odometerKm: 12345.678 });
    expect(positionCsvLine(noisy, 'America/Mexico_City')).toBe(
      '2024-05-01T14:30:05.000Z,2024-05-01T08:30:05-06:00,19.4326,-99.1332,42.6,90,2240,11,true,12345.678,true,"{""odometer"":12345678.4,""rssi"":23}"\r\n',
    );
  });

  it('keep nulls null and whole values whole', () => {
    const bare: PositionRow = { ...noisy, latitude: 19.5, longitude: -99, altitude: null, speed_kmh: 42, heading: null, satellites: null, ignition: null, attributes: '{}' };
    expect(positionView(bare, 'UTC')).toMatchObject({ lat: 19.5, lng: -99, speedKmh: 42, heading: null, altitude: null, odometerKm: null });
    expect(positionCsvLine(bare, 'UTC')).toBe('2024-05-01T14:30:05.000Z,2024-05-01T14:30:05+00:00,19.5,-99,42,,,,,,true,{}\r\n');
  });
});

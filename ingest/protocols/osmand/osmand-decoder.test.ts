import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { decodeOsmAnd } from './osmand-decoder.ts';

const decode = (query: string) => decodeOsmAnd(new URLSearchParams(query));

describe('OsmAnd decoder', () => {
  it('reads the parameters phone apps send, speed in knots', () => {
    const { deviceId, position } = decode('id=123456&lat=19.4326&lon=-99.1332&timestamp=1714573800&speed=10&bearing=370&altitude=2240&accuracy=5&batt=87&charge=true');
    expect(deviceId).toBe('123456');
    expect(position).toEqual({
      fixTime: new Date('2024-05-01T14:30:00Z'),
      valid: true,
      latitude: 19.4326,
      longitude: -99.1332,
      altitude: 2240,
      speedKmh: 18.52,
      heading: 10,
      attributes: { accuracy: 5, batteryLevel: 87, charge: true },
    });
  });

  it.each([
    ['1714573800000', '2024-05-01T14:30:00.000Z'],
    ['2024-05-01T14:30:00Z', '2024-05-01T14:30:00.000Z'],
    ['1714573800.5', '2024-05-01T14:30:00.500Z'],
  ])('reads timestamp %s', (timestamp, iso) => {
    expect(decode(`id=1&lat=1&lon=2&timestamp=${encodeURIComponent(timestamp)}`).position.fixTime.toISOString()).toBe(iso);
  });

  it.each([
    ['no id', 'lat=1&lon=2'],
    ['no latitude', 'id=1&lon=2'],
    ['a latitude off the globe', 'id=1&lat=91&lon=2'],
    ['a text speed', 'id=1&lat=1&lon=2&speed=fast'],
    ['a text timestamp', 'id=1&lat=1&lon=2&timestamp=yesterday'],
    ['an id with spaces', 'id=a%20b&lat=1&lon=2'],
  ])('refuses %s', (_case, query) => {
    expect(() => decode(query)).toThrow(MalformedFrameError);
  });
});

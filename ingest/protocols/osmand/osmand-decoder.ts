import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { AttributeValue, DecodedPosition } from '../../protocol.ts';

/**
 * OsmAnd, the protocol of phone tracking apps (Traccar Client, OsmAnd): one HTTP request per fix,
 * parameters in the query string or a form body: `id`, `lat`, `lon`, `timestamp` (Unix seconds or
 * milliseconds, or ISO 8601), `speed` (knots), `bearing`, `altitude`, `accuracy`, `batt`, `charge`.
 */
export interface OsmAndFix {
  deviceId: string;
  position: DecodedPosition;
}

const KMH_PER_KNOT = 1.852;
const ID = /^[0-9A-Za-z._-]{1,32}$/;

function number(params: URLSearchParams, ...names: string[]): number | undefined {
  for (const name of names) {
    const raw = params.get(name);
    if (raw === null || raw === '') continue;
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new MalformedFrameError(`${name} is not a number: ${JSON.stringify(raw.slice(0, 32))}`);
    return value;
  }
  return undefined;
}

function time(raw: string | null): Date {
  if (raw === null || raw === '') return new Date();
  if (/^\d+(\.\d+)?$/.test(raw)) {
    const value = Number(raw);
    // Seconds until the year 33658; a larger number is milliseconds.
    return new Date(value > 1e12 ? value : value * 1000);
  }
  const parsed = new Date(raw);
  if (Number.isNaN(parsed.getTime())) throw new MalformedFrameError(`timestamp is not a time: ${JSON.stringify(raw.slice(0, 40))}`);
  return parsed;
}

export function decodeOsmAnd(params: URLSearchParams): OsmAndFix {
  const deviceId = params.get('id') ?? params.get('deviceid') ?? '';
  if (!ID.test(deviceId)) throw new MalformedFrameError('id is missing or not a device identifier');
  const latitude = number(params, 'lat');
  const longitude = number(params, 'lon');
  if (latitude === undefined || longitude === undefined) throw new MalformedFrameError('lat and lon are required');
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) throw new MalformedFrameError('lat or lon out of range');
  const attributes: Record<string, AttributeValue> = {};
  const accuracy = number(params, 'accuracy', 'hdop');
  if (accuracy !== undefined) attributes.accuracy = accuracy;
  const battery = number(params, 'batt');
  if (battery !== undefined) attributes.batteryLevel = battery;
  const charge = params.get('charge');
  if (charge !== null) attributes.charge = charge === 'true' || charge === '1';
  const speed = number(params, 'speed');
  const heading = number(params, 'bearing', 'heading');
  const altitude = number(params, 'altitude');
  const valid = params.get('valid');
  return {
    deviceId,
    position: {
      fixTime: time(params.get('timestamp')),
      valid: valid === null ? true : valid === 'true' || valid === '1',
      latitude,
      longitude,
      ...(altitude !== undefined && { altitude }),
      ...(speed !== undefined && { speedKmh: speed * KMH_PER_KNOT }),
      ...(heading !== undefined && { heading: ((heading % 360) + 360) % 360 }),
      attributes,
    },
  };
}

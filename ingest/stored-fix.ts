import type { StoredFix } from '../db/position-batches.ts';
import type { AttributeValue, DecodedPosition } from './protocol.ts';

const num = (v: AttributeValue | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const bool = (v: AttributeValue | undefined) => (typeof v === 'boolean' ? v : null);
// PostgreSQL text and jsonb cannot hold U+0000, and a device can send one inside any text field.
const NUL = /\u0000/g;
const withoutNul = (v: string) => (v.includes('\u0000') ? v.replace(NUL, '') : v);

function storableAttributes(a: Record<string, AttributeValue>): Record<string, AttributeValue> {
  for (const key in a) {
    if (typeof a[key] === 'string' && a[key].includes('\u0000')) a[key] = withoutNul(a[key]);
  }
  return a;
}

/** A decoded position as a row: the status fields the API shows come out of the attributes here. */
export function storedFix(deviceId: number, p: DecodedPosition, receivedAt: Date): StoredFix {
  const a = storableAttributes(p.attributes);
  const odometer = num(a.odometer);
  return {
    deviceId,
    receivedAt,
    fixTime: p.fixTime,
    valid: p.valid,
    latitude: p.latitude,
    longitude: p.longitude,
    altitude: p.altitude ?? null,
    speedKmh: p.speedKmh ?? null,
    heading: p.heading ?? null,
    satellites: p.satellites ?? null,
    ignition: bool(a.ignition),
    motion: bool(a.motion),
    odometerKm: odometer === null ? null : odometer / 1000,
    powerVoltage: num(a.power),
    backupVoltage: num(a.battery),
    signalStrength: num(a.rssi),
    driverId: typeof a.driverUniqueId === 'string' ? a.driverUniqueId : null,
    attributes: a,
  };
}

/** Coordinates and time a database will accept; a decoder may still produce nonsense from a lying device. */
export function storable(p: DecodedPosition): boolean {
  return (
    Number.isFinite(p.latitude) && Math.abs(p.latitude) <= 90 &&
    Number.isFinite(p.longitude) && Math.abs(p.longitude) <= 180 &&
    Number.isFinite(p.fixTime.getTime()) && p.fixTime.getUTCFullYear() >= 1990 && p.fixTime.getUTCFullYear() <= 2200
  );
}

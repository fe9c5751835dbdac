import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';
import type { AttributeValue, DecodedPosition, DecodedReport } from './protocol.ts';

// PostgreSQL text and jsonb cannot hold U+0000, and a device can send one inside any text field.
const NUL = /\u0000/g;
const withoutNul = (v: string) => (v.includes('\u0000') ? v.replace(NUL, '') : v);

function storableAttributes(a: Record<string, AttributeValue>): Record<string, AttributeValue> {
  for (const key in a) {
    const v = a[key];
    if (typeof v === 'string' && v.includes('\u0000')) a[key] = withoutNul(v);
  }
  return a;
}

/**
 * What a field may plausibly hold. A value outside is a decoding of garbage or a device bug; it is
 * stored as null (and counted) rather than refused, so one bad field never stalls a tracker.
 */
const RANGES = {
  /** Metres: the Dead Sea shore is at −430; stratospheric balloons reach 40 km. */
  altitude: { min: -1_000, max: 50_000, whole: false },
  /** Aircraft trackers report up to ~1,000 km/h. */
  speedKmh: { min: 0, max: 2_000, whole: false },
  heading: { min: 0, max: 360, whole: false },
  satellites: { min: 0, max: 255, whole: true },
  odometerKm: { min: 0, max: 100_000_000, whole: false },
  powerVoltage: { min: 0, max: 1_000, whole: false },
  backupVoltage: { min: 0, max: 1_000, whole: false },
  /** The specification's GSM scale, which decoders convert to (domain/device-signal.ts). */
  signalStrength: { min: 0, max: 31, whole: true },
} as const;

export type RangeCheckedField = keyof typeof RANGES;

function inRange(field: RangeCheckedField, v: AttributeValue | null | undefined, outOfRange: (field: RangeCheckedField) => void): number | null {
  if (v === undefined || v === null) return null;
  const range = RANGES[field];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < range.min || v > range.max || (range.whole && !Number.isInteger(v))) {
    outOfRange(field);
    return null;
  }
  return v;
}

const bool = (v: AttributeValue | undefined) => (typeof v === 'boolean' ? v : null);

/**
 * A decoded position as a row: the status fields the API shows come out of the attributes here, each
 * checked against its range (`outOfRange` is told of every value set to null).
 */
export function storedFix(deviceId: number, p: DecodedPosition, receivedAt: Date, outOfRange: (field: RangeCheckedField) => void): StoredFix {
  const a = storableAttributes(p.attributes);
  const odometer = typeof a.odometer === 'number' ? a.odometer / 1000 : undefined;
  return {
    deviceId,
    receivedAt,
    fixTime: p.fixTime,
    valid: p.valid,
    latitude: p.latitude,
    longitude: p.longitude,
    altitude: inRange('altitude', p.altitude, outOfRange),
    speedKmh: inRange('speedKmh', p.speedKmh, outOfRange),
    heading: inRange('heading', p.heading, outOfRange),
    satellites: inRange('satellites', p.satellites, outOfRange),
    ignition: bool(a.ignition),
    motion: bool(a.motion),
    odometerKm: inRange('odometerKm', odometer, outOfRange),
    powerVoltage: inRange('powerVoltage', a.power, outOfRange),
    backupVoltage: inRange('backupVoltage', a.battery, outOfRange),
    signalStrength: inRange('signalStrength', p.signalStrength, outOfRange),
    connectionType: p.connectionType ?? null,
    driverId: typeof a.driverUniqueId === 'string' ? a.driverUniqueId : null,
    attributes: a,
  };
}

/** Telemetry without a fix, as a row. */
export function storedReport(deviceId: number, r: DecodedReport, receivedAt: Date): StoredReport {
  const time = r.time && Number.isFinite(r.time.getTime()) && storableYear(r.time) ? r.time : null;
  const row: StoredReport = { deviceId, receivedAt, time, attributes: storableAttributes(r.attributes) };
  if (r.signalStrength !== undefined) row.signalStrength = r.signalStrength;
  if (r.connectionType !== undefined) row.connectionType = r.connectionType;
  return row;
}

const storableYear = (t: Date) => t.getUTCFullYear() >= 1990 && t.getUTCFullYear() <= 2200;

/**
 * Why no database would hold this position (a decoder may still produce nonsense from a lying device),
 * or undefined when it is storable. An unstorable position is not a fix, but it is still a report.
 */
export function unstorableReason(p: DecodedPosition): string | undefined {
  if (!(Number.isFinite(p.latitude) && Math.abs(p.latitude) <= 90)) return `latitude ${p.latitude} outside -90..90`;
  if (!(Number.isFinite(p.longitude) && Math.abs(p.longitude) <= 180)) return `longitude ${p.longitude} outside -180..180`;
  if (!Number.isFinite(p.fixTime.getTime())) return 'fix time is not a date';
  if (!storableYear(p.fixTime)) return `fix time ${p.fixTime.toISOString()} outside 1990..2200`;
  return undefined;
}

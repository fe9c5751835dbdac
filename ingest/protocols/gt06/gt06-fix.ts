import type { DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';
import { utcMillis } from '../../codec/utc-millis.ts';

/** What a GT06 connection remembers between frames, kept in `session.options.gt06`. */
export interface Gt06State {
  /** Device clock offset from UTC announced in the login (ms); device times are local to it. */
  utcOffsetMs: number;
}

export function gt06State(session: DecoderSession): Gt06State {
  const existing = session.options.gt06 as Gt06State | undefined;
  if (existing) return existing;
  const created: Gt06State = { utcOffsetMs: 0 };
  session.options.gt06 = created;
  return created;
}

/** Model name an operator configured for this device (several Concox models reuse message types). */
export function gt06Model(session: DecoderSession): string | undefined {
  const model = session.options.model;
  return typeof model === 'string' ? model.toUpperCase() : undefined;
}

/** YY MM DD hh mm ss in the device's clock; odd values roll over (as Date.UTC does) instead of failing. */
export function readDateTime(r: ByteReader, state: Gt06State): Date {
  const y = r.u8(), mo = r.u8(), d = r.u8(), h = r.u8(), mi = r.u8(), s = r.u8();
  return new Date(utcMillis(2000 + y, mo, d, h, mi, s) - state.utcOffsetMs);
}

function bcdByte(r: ByteReader): number {
  const b = r.u8();
  return (b >> 4) * 10 + (b & 0x0f);
}

/** Same layout in packed BCD digits, as the WiFi messages carry it. */
export function readBcdDateTime(r: ByteReader, state: Gt06State): Date {
  const y = bcdByte(r), mo = bcdByte(r), d = bcdByte(r), h = bcdByte(r), mi = bcdByte(r), s = bcdByte(r);
  return new Date(utcMillis(2000 + y, mo, d, h, mi, s) - state.utcOffsetMs);
}

/** Telemetry without a fix of its own (status, cells, command answers), timed when the message says when. */
export function newReport(time?: Date): DecodedReport {
  return time ? { time, attributes: {} } : { attributes: {} };
}

export interface GpsLayout {
  /** A byte before the fix says whether the rest is present (0 = no fix). */
  lengthByte?: boolean;
  satellites?: boolean;
  speed?: boolean;
}

/** Applies the course/status word: course in bits 0-9, north in bit 10, west in bit 11, fix in bit 12. */
export function applyCourseStatus(p: DecodedPosition, flags: number, latRaw: number, lonRaw: number): void {
  p.heading = flags & 0x3ff;
  p.valid = (flags & 0x1000) !== 0;
  const lat = latRaw / 1_800_000;
  const lon = lonRaw / 1_800_000;
  p.latitude = flags & 0x0400 ? lat : -lat;
  p.longitude = flags & 0x0800 ? -lon : lon;
  // Bit 14 says the tracker reports ACC here; bit 15 is then the ignition line.
  if (flags & 0x4000) p.attributes.ignition = (flags & 0x8000) !== 0;
}

/**
 * Reads the common GPS block (time, satellites, latitude and longitude in 1/1,800,000 degree,
 * speed km/h, course/status). Returns undefined when a length-prefixed block says "no fix".
 */
export function readGps(r: ByteReader, state: Gt06State, layout: GpsLayout = {}): DecodedPosition | undefined {
  const fixTime = readDateTime(r, state);
  if (layout.lengthByte && r.u8() === 0) return undefined;
  const p: DecodedPosition = { fixTime, valid: false, latitude: 0, longitude: 0, attributes: {} };
  if (layout.satellites !== false) p.satellites = r.u8() & 0x0f;
  const latRaw = r.u32();
  const lonRaw = r.u32();
  if (layout.speed !== false) p.speedKmh = r.u8();
  applyCourseStatus(p, r.u16(), latRaw, lonRaw);
  return p;
}

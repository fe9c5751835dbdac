import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { signalFromCsq } from '../../../domain/device-signal.ts';

/**
 * Text Meitrack event reports (AAA; AFF carries one extra field before the event code):
 *   event, lat, lon, yyMMddHHmmss, A|V, satellites, GSM signal, speed km/h, course, HDOP,
 *   altitude, odometer m, runtime s, mcc|mnc|lac|cell, io (input hex byte, output hex byte),
 *   analog inputs `ad1|ad2|ad3|battery|power` (hex hundredths, or decimal volts on newer models),
 *   then optional event data, reserved, protocol, fuel and temperature sensors.
 */

const ALARMS: Record<number, string> = {
  1: 'sos', 17: 'lowBattery', 18: 'lowPower', 19: 'overspeed', 20: 'geofenceEnter', 21: 'geofenceExit',
  22: 'powerRestored', 23: 'powerCut', 36: 'tow', 44: 'jamming', 78: 'accident', 90: 'cornering',
  91: 'cornering', 129: 'hardBraking', 130: 'hardAcceleration', 135: 'fatigueDriving',
};

const DECIMAL = /^-?\d+(\.\d+)?$/;
const HEX = /^[0-9A-Fa-f]+$/;
const DATE_TIME = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/;

function number(field: string | undefined, what: string): number {
  if (field === undefined || !DECIMAL.test(field)) throw new MalformedFrameError(`Meitrack ${what} is not a number: ${String(field)}`);
  return Number(field);
}

function optionalNumber(field: string | undefined): number | undefined {
  return field !== undefined && DECIMAL.test(field) ? Number(field) : undefined;
}

function hex(field: string | undefined): number | undefined {
  return field !== undefined && HEX.test(field) ? parseInt(field, 16) : undefined;
}

function fixTime(field: string | undefined): Date {
  const m = field === undefined ? null : DATE_TIME.exec(field);
  if (!m) throw new MalformedFrameError(`Meitrack time is not yyMMddHHmmss: ${String(field)}`);
  const [yy, mo, dd, hh, mi, ss] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59) throw new MalformedFrameError(`Meitrack time ${field} is not a date`);
  return new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
}

/** `ad1|ad2|ad3|battery|power`: decimal volts when the device writes a point, else hex hundredths. */
function analogs(field: string, a: Record<string, AttributeValue>): void {
  const parts = field.split('|');
  const decimal = parts.some((x) => x.includes('.'));
  const value = (x: string | undefined): number | undefined => (decimal ? optionalNumber(x) : hex(x));
  if (decimal) {
    // Newer firmware: battery|power|rtc|mcu|gps voltages.
    const battery = value(parts[0]);
    const power = value(parts[1]);
    if (battery !== undefined) a.battery = battery;
    if (power !== undefined) a.power = power;
    return;
  }
  for (let i = 0; i < 3; i++) {
    const adc = value(parts[i]);
    if (adc !== undefined) a[`adc${i + 1}`] = adc;
  }
  const battery = value(parts[3]);
  const power = value(parts[4]);
  if (battery !== undefined) a.battery = battery / 100;
  if (power !== undefined) a.power = power / 100;
}

function cell(field: string | undefined, a: Record<string, AttributeValue>): void {
  const [mcc, mnc, lac, cid] = (field ?? '').split('|');
  if (mcc && mnc && DECIMAL.test(mcc) && DECIMAL.test(mnc) && Number(mcc) !== 0) {
    a.mcc = Number(mcc);
    a.mnc = Number(mnc);
    const l = hex(lac);
    const c = hex(cid);
    if (l !== undefined) a.lac = l;
    if (c !== undefined) a.cid = c;
  }
}

/** Optional tail: event data, reserved, protocol version, fuel (`IIFF` hex: integer, hundredths). */
function tail(fields: string[], event: number, a: Record<string, AttributeValue>): void {
  const [eventData, , , fuel] = fields;
  if (eventData) a[event === 37 ? 'driverUniqueId' : 'eventData'] = eventData;
  if (fuel && /^[0-9A-Fa-f]{4}$/.test(fuel)) a.fuel = parseInt(fuel.slice(0, 2), 16) + parseInt(fuel.slice(2), 16) / 100;
}

/** `fields` starts at the event code. */
export function decodeEventReport(fields: string[]): DecodedPosition {
  const event = number(fields[0], 'event');
  const latitude = number(fields[1], 'latitude');
  const longitude = number(fields[2], 'longitude');
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) throw new MalformedFrameError('Meitrack coordinates out of range');
  const time = fixTime(fields[3]);
  const validity = fields[4];
  if (validity !== 'A' && validity !== 'V') throw new MalformedFrameError(`Meitrack validity flag ${String(validity)}`);
  const satellites = number(fields[5], 'satellites');
  const rssi = number(fields[6], 'GSM signal');
  const a: Record<string, AttributeValue> = { event, rssi };
  const alarm = ALARMS[event];
  if (alarm) a.alarm = alarm;
  const speedKmh = number(fields[7], 'speed');
  const heading = optionalNumber(fields[8]);
  const hdop = optionalNumber(fields[9]);
  if (hdop !== undefined) a.hdop = hdop;
  const altitude = optionalNumber(fields[10]);
  const odometer = optionalNumber(fields[11]);
  if (odometer !== undefined) a.odometer = odometer;
  const runtime = optionalNumber(fields[12]);
  if (runtime !== undefined) a.runtime = runtime;
  cell(fields[13], a);
  const io = fields[14] ?? '';
  if (/^[0-9A-Fa-f]{4}$/.test(io)) {
    a.input = parseInt(io.slice(0, 2), 16);
    a.output = parseInt(io.slice(2), 16);
  }
  if (fields[15]) analogs(fields[15], a);
  tail(fields.slice(16), event, a);
  const p: DecodedPosition = {
    fixTime: time,
    valid: validity === 'A',
    latitude,
    longitude,
    altitude,
    speedKmh,
    heading: heading !== undefined && heading >= 0 && heading <= 360 ? heading : undefined,
    satellites,
    attributes: a,
  };
  // The GSM signal is the modem's CSQ, already the specification's 0–31 scale.
  const signal = signalFromCsq(rssi);
  if (signal !== undefined) p.signalStrength = signal;
  return p;
}

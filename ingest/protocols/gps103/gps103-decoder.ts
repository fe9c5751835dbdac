import type { AttributeValue, DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { coordinate, signalOf, typeAttributes, utcTime } from './gps103-fields.ts';
import { decodePhotoChunk, startPhoto } from './gps103-photo.ts';

const latin1 = (s: string): Uint8Array => Buffer.from(s, 'latin1');

/** The longest device id we accept (an IMEI is 15 digits). */
const MAX_ID_LENGTH = 20;
const KMH_PER_KNOT = 1.852;

/**
 * GPS103 (Coban TK103/TK104/GPS-103…) decoder. Messages are comma-separated ASCII:
 * - login `##,imei:<imei>,A;`, answered `LOAD`;
 * - heartbeat `<imei>;`, answered `ON` (a few firmwares glue a report after it: `<imei>imei:…`);
 * - report `imei:<imei>,<type>,<local yymmddhhmm[ss]>,<rfid/phone>,F,<utc hhmmss.sss>,<A|V>,lat,N,lon,E,
 *   speed (knots),course[,altitude,ignition,door,fuel1 %,fuel2 %,temperature]`; with `L` instead of
 *   `F` it carries only the serving cell (`L,,,<lac hex>,,<cid hex>,,,`) and becomes a report;
 * - `imei:<imei>,OBD,…` vehicle data (report); `imei:<imei>,vr,<hex>` picture chunks (gps103-photo.ts);
 * - an alternative format ending in `*`, with decimal degrees, km/h, rssi and satellites.
 * The type field names alarms (`help me` is the SOS button, answered `**,imei:<imei>,E;` to stop its repeats),
 * and answers to commands: the command letter and `t` (`jt` after J, `kt` after K), or `f` when the
 * device refused it (`lf`: arming refused while the ignition is on).
 */
export function decodeGps103(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  let text = Buffer.from(frame).toString('latin1').replace(/[\r\n]+$/, '');

  const login = /^##,imei:(\d+),/.exec(text);
  if (login) return identified(session, login[1]!, { positions: [], reply: latin1('LOAD') });

  let heartbeat = false;
  if (/^\d/.test(text)) {
    heartbeat = true;
    const start = text.indexOf('imei:');
    if (start < 0) {
      const id = /^(\d+);?$/.exec(text);
      if (!id) throw new MalformedFrameError('GPS103 heartbeat is not an IMEI');
      return identified(session, id[1]!, { positions: [], reply: latin1('ON') });
    }
    text = text.slice(start);
  }

  const header = /^imei:(\d+),([^,]*)/.exec(text);
  if (!header) throw new MalformedFrameError('GPS103 message does not start with imei:<digits>,');
  const result: DecodedFrame = { positions: [] };
  if (heartbeat) result.reply = latin1('ON');
  const [, id, type] = header;
  identified(session, id!, result);

  const body = text.replace(/;$/, '');
  if (type === 'vr') return decodePhotoChunk(body.slice(header[0].length + 1), session, result);
  if (type === 'OBD') {
    const report = decodeObd(body);
    if (report) result.reports = [report];
    return result;
  }
  if (body.endsWith('*')) {
    const position = decodeAlternative(body);
    if (position) result.positions.push(position);
    return result;
  }
  if (type === 'help me') result.reply = latin1(`**,imei:${id},E;`);
  if (COMMAND_ANSWER.test(type!)) result.answer = { text: answerText(type!) };
  startPhoto(type!, session);
  const decoded = decodeRegular(body.split(','));
  if (decoded && 'fixTime' in decoded) result.positions.push(decoded);
  else if (decoded) result.reports = [decoded];
  return result;
}

/** A command's answer: its letter in lower case and `t` (done) or `f` (refused). */
const COMMAND_ANSWER = /^[a-z][tf]$/;

/**
 * The answer as the command keeps it. A refusal says so in words, since the delivery fails a command
 * on an answer that reads as a refusal (domain/commands/answer-outcome.ts), and `lf` alone does not.
 */
function answerText(type: string): string {
  return type.endsWith('f') ? `${type} (refused)` : type;
}

function identified(session: DecoderSession, id: string, result: DecodedFrame): DecodedFrame {
  if (id.length > MAX_ID_LENGTH) throw new MalformedFrameError(`GPS103 device id of ${id.length} digits, more than the ${MAX_ID_LENGTH} allowed`);
  session.deviceId = id;
  result.deviceId = id;
  return result;
}

/** The device's local date and time: `yymmddhhmm[ss]`, also written `yy/mm/dd hh:mm`. */
const LOCAL = /^(\d\d)\/?(\d\d)\/?(\d\d) ?(\d\d):?(\d\d)(?:\d\d)?$/;

/** The fix after `F,`: UTC time, validity, then latitude and longitude with their hemispheres. */
const FIX =
  /^(?:(?<uh>\d\d)(?<um>\d\d)(?<us>\d\d)(?:\.\d+)?|\d{0,5}(?:\.\d+)?),(?<valid>[AV]),(?:(?<ns1>[NS]),)?(?<latd>\d+)(?<latm>\d\d\.\d+),(?:(?<ns>[NS]),)?(?:(?<ew1>[EW]),)?(?<lond>\d+)(?<lonm>\d\d\.\d+)(?:,(?<ew>[EW])?)?(?:,(?<rest>.*))?$/;

/** speed, course, altitude, ignition, door, fuel1 %, fuel2 % (or a bare number), temperature. */
const EXTRAS = [/^\d+\.?\d*$/, /^\d+\.?\d*$/, /^-?\d+\.?\d*$/, /^[01]$/, /^[01]$/, /^\d+\.\d+%$/, /^(?:\d+\.\d+%|\d+)$/, /^[-+]?\d+$/];

function decodeRegular(fields: string[]): DecodedPosition | DecodedReport | undefined {
  const [, type = '', local = '', rfid = '', kind] = fields;
  const attributes = typeAttributes(type, rfid);
  if (kind === 'L') {
    // No fix: the serving cell, where the firmware gives it, in hexadecimal.
    const [lac, cid] = [fields[7], fields[9]];
    if (lac && cid && /^[0-9A-Fa-f]+$/.test(lac) && /^[0-9A-Fa-f]+$/.test(cid)) {
      attributes.lac = parseInt(lac, 16);
      attributes.cid = parseInt(cid, 16);
    }
    return { attributes };
  }
  if (kind !== 'F') return undefined;
  const g = FIX.exec(fields.slice(5).join(','))?.groups;
  if (!g) return undefined;
  const time = fixTime(local, g);
  if (!time) return { attributes };

  const position: DecodedPosition = {
    fixTime: time,
    valid: g.valid === 'A',
    latitude: coordinate(g.latd!, g.latm!, g.ns ?? g.ns1, 90),
    longitude: coordinate(g.lond!, g.lonm!, g.ew ?? g.ew1, 180),
    attributes,
  };
  const extras = g.rest === undefined ? [] : g.rest.split(',');
  const values: string[] = [];
  for (const [i, pattern] of EXTRAS.entries()) {
    const value = extras[i];
    if (value === undefined || (value !== '' && !pattern.test(value))) break;
    values[i] = value;
  }
  const [speed, course, altitude, ignition, door, fuel1, fuel2, temperature] = values;
  if (speed) position.speedKmh = Number(speed) * KMH_PER_KNOT;
  if (course && Number(course) <= 360) position.heading = Number(course);
  if (altitude) position.altitude = Number(altitude);
  if (ignition) attributes.ignition = ignition === '1';
  if (door) attributes.door = door === '1';
  if (fuel1) attributes.fuel1 = parseFloat(fuel1);
  if (fuel2?.endsWith('%')) attributes.fuel2 = parseFloat(fuel2);
  if (temperature) attributes.temp1 = Number(temperature);
  return position;
}

/**
 * The fix time: the local date with the local hour and minute, the UTC seconds, moved back by the
 * local offset the two clocks show (kept within ±12 h, so a fix near midnight lands on the right day).
 * Without a UTC time the local time stands; without a readable date there is no fix time.
 */
function fixTime(local: string, g: Record<string, string | undefined>): Date | undefined {
  const d = LOCAL.exec(local);
  if (!d) return undefined;
  const [year, month, day, hour, minute] = d.slice(1, 6).map(Number) as [number, number, number, number, number];
  const second = g.us === undefined ? 0 : Number(g.us);
  const base = utcTime(2000 + year, month, day, hour, minute, second);
  if (!base || g.uh === undefined) return base;
  const [uh, um] = [Number(g.uh), Number(g.um)];
  if (uh > 23 || um > 59) return undefined;
  let delta = (hour - uh) * 60 + (minute - um);
  if (delta <= -12 * 60) delta += 24 * 60;
  else if (delta > 12 * 60) delta -= 24 * 60;
  return new Date(base.getTime() - delta * 60_000);
}

/**
 * `imei:<imei>,OBD,<yymmddhhmmss>,odometer,instant fuel,average fuel,engine hours,speed km/h,load %,
 * coolant °C,throttle %,rpm,battery V,DTCs…`: vehicle data without a fix. The battery read over
 * OBD is the vehicle's own (12–14 V while running): the tracker's supply, so `power`, not its backup.
 */
const OBD =
  /^imei:\d+,OBD,(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d),(\d+)?,(\d+\.\d+)?,(\d+\.\d+)?,(\d+)?,(\d+),(\d+\.?\d*)%,(?:([-+]?\d+)|[-+]?),(\d+\.?\d*)%,(\d+),(\d+\.\d+),([^;]*)/;

function decodeObd(text: string): DecodedReport | undefined {
  const m = OBD.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const attributes: Record<string, AttributeValue> = {};
  // The unit of the OBD odometer is not documented (kilometres on the vehicles seen), so it is kept raw.
  if (m[7] !== undefined) attributes.obdOdometer = Number(m[7]);
  if (m[9] !== undefined) attributes.fuelConsumption = Number(m[9]);
  if (m[10] !== undefined) attributes.engineHours = Number(m[10]);
  attributes.obdSpeed = Number(m[11]);
  attributes.engineLoad = Number(m[12]);
  if (m[13] !== undefined) attributes.coolantTemp = Number(m[13]);
  attributes.throttle = Number(m[14]);
  attributes.rpm = Number(m[15]);
  attributes.power = Number(m[16]);
  const dtcs = m[17]!.replace(/,/g, ' ').trim();
  if (dtcs) attributes.dtcs = dtcs;
  const time = utcTime(2000 + year, month, day, hour, minute, second);
  return time ? { time, attributes } : { attributes };
}

/**
 * Alternative format: `imei:<imei>,<name>,<event>,<sensor id>,<sensor V>,hhmmss,ddmmyy,rssi,gps,
 * lat,lon,speed km/h,course,altitude,hdop,satellites,ignition,charge,<error>,*`; `-` runs mean absent.
 */
const ALTERNATIVE =
  /^imei:\d+,[^,]+,(?:-+|(.+?)),(?:-+|(.+?)),(?:-+|(.+?)),(\d\d)(\d\d)(\d\d),(\d\d)(\d\d)(\d\d),(\d+),(\d),(-?\d+\.\d+),(-?\d+\.\d+),(\d+),(\d+),(-?\d+),(\d+\.\d+),(\d+),([01]),([01]),(?:-+|(.+?)),?\*$/;

function decodeAlternative(text: string): DecodedPosition | undefined {
  const m = ALTERNATIVE.exec(text);
  if (!m) return undefined;
  const [hour, minute, second, day, month, year] = m.slice(4, 10).map(Number) as [number, number, number, number, number, number];
  const time = utcTime(2000 + year, month, day, hour, minute, second);
  const latitude = Number(m[12]);
  const longitude = Number(m[13]);
  if (!time) return undefined;
  if (!(Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180)) throw new MalformedFrameError('GPS103 coordinates out of range');
  const attributes: Record<string, AttributeValue> = { ignition: m[19] === '1', charge: m[20] === '1', hdop: Number(m[17]) };
  if (m[1] !== undefined) attributes.event = m[1];
  if (m[2] !== undefined) attributes.sensorId = m[2];
  if (m[3] !== undefined && Number.isFinite(Number(m[3]))) attributes.sensorVoltage = Number(m[3]);
  if (m[21] !== undefined) attributes.error = m[21];
  const rssi = Number(m[10]);
  attributes.rssi = rssi;
  const position: DecodedPosition = {
    fixTime: time,
    valid: Number(m[11]) > 0,
    latitude,
    longitude,
    speedKmh: Number(m[14]),
    altitude: Number(m[16]),
    satellites: Number(m[18]),
    attributes,
  };
  const course = Number(m[15]);
  if (course <= 360) position.heading = course;
  const signal = signalOf(rssi);
  if (signal !== undefined) position.signalStrength = signal;
  return position;
}

import type { ConnectionType } from '../../../domain/device-signal.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { AttributeValue, DecodedFrame, DecodedPosition, DecoderSession } from '../../protocol.ts';

/**
 * Watch (3G/2G personal trackers and kids' watches): `[MF*ID*LLLL*TYPE,fields]`, text apart from the
 * voice and picture messages. LK is the link (keep-alive, answered `LK`), UD/UD2/UD_LTE/WT are
 * positions, AL positions carry an alarm (answered `AL`), health messages carry heart rate, blood
 * pressure, oxygen and temperature.
 */

const latin1 = new TextDecoder('latin1');
const ascii = new TextEncoder();

interface Header {
  manufacturer: string;
  id: string;
  index?: string;
  type: string;
  /** What follows `TYPE,` (the raw bytes, since voice content is binary). */
  body: Uint8Array;
  /** The whole content, type included, as text. */
  content: string;
}

function malformed(why: string): never {
  throw new MalformedFrameError(`watch: ${why}`);
}

function readHeader(frame: Uint8Array): Header {
  if (frame.length < 8 || frame[0] !== 0x5b || frame[frame.length - 1] !== 0x5d) malformed('not a [..] frame');
  const inner = frame.subarray(1, frame.length - 1);
  const stars: number[] = [];
  for (let i = 0; i < inner.length && stars.length < 4; i++) if (inner[i] === 0x2a) stars.push(i);
  if (stars.length < 3) malformed('header needs manufacturer, id and length');
  const text = (a: number, b: number) => latin1.decode(inner.subarray(a, b));
  const manufacturer = text(0, stars[0]!);
  const id = text(stars[0]! + 1, stars[1]!);
  if (!/^[0-9A-Za-z]{2}$/.test(manufacturer)) malformed('manufacturer must be two letters or digits');
  if (!/^[0-9A-Za-z]{1,20}$/.test(id)) malformed('bad device id');
  let lengthAt = stars[1]! + 1;
  let index: string | undefined;
  // ZJ frames carry an index before the length: two hex fields in a row.
  if (stars.length === 4 && stars[2]! - stars[1]! === 5 && stars[3]! - stars[2]! === 5 && /^[0-9A-Fa-f]{4}$/.test(text(stars[2]! + 1, stars[3]!))) {
    index = text(stars[1]! + 1, stars[2]!);
    lengthAt = stars[2]! + 1;
  }
  const contentAt = stars[index === undefined ? 2 : 3]! + 1;
  if (!/^[0-9A-Fa-f]{2,8}$/.test(text(lengthAt, contentAt - 1))) malformed('length must be hex');
  const content = inner.subarray(contentAt);
  let comma = content.indexOf(0x2c);
  if (comma < 0) comma = content.length;
  const type = latin1.decode(content.subarray(0, comma));
  if (!/^[0-9A-Za-z_]{1,32}$/.test(type)) malformed('bad message type');
  return { manufacturer, id, index, type, body: content.subarray(Math.min(comma + 1, content.length)), content: latin1.decode(content) };
}

/** The exact reply frame: `[MF*ID*LLLL*CONTENT]`, length as 4 lower-case hex digits. */
export function watchFrame(manufacturer: string, id: string, content: string, index?: string): Uint8Array {
  const length = content.length.toString(16).padStart(4, '0');
  return ascii.encode(index === undefined ? `[${manufacturer}*${id}*${length}*${content}]` : `[${manufacturer}*${id}*${index}*${length}*${content}]`);
}

const POSITION =
  /^(\d\d)(\d\d)(\d\d),(\d\d)(\d\d)(\d\d),([AV]),\s*(-?\d+(?:\.\d+)?),([NS]?),\s*(-?\d+(?:\.\d+)?),([EW]?),(\d+\.?\d*),(\d+\.?\d*),(-?\d+\.?\d*),(\d+),(\d+),(\d+),(\d+),(\d+),([0-9A-Fa-f]+)(?:,(.*))?$/s;

/** The highest-priority alarm in the status word (its bits, low to high). */
export function watchAlarm(status: number): string | undefined {
  const bit = (n: number) => (status & (2 ** n)) !== 0;
  if (bit(0)) return 'lowBattery';
  if (bit(1)) return 'geofenceExit';
  if (bit(2)) return 'geofenceEnter';
  if (bit(14)) return 'powerCut';
  if (bit(16)) return 'sos';
  if (bit(17)) return 'lowBattery';
  if (bit(18)) return 'geofenceExit';
  if (bit(19)) return 'geofenceEnter';
  if (bit(20)) return 'removing';
  if (bit(21) || bit(22)) return 'fallDown';
  return undefined;
}

/** The watches report rssi as 0–100 (percent); the specification's scale is 0–31. */
function signal(rssi: number): number {
  return Math.max(0, Math.min(31, Math.round((rssi * 31) / 100)));
}

/** UD_LTE / AL_LTE and UD_WCDMA name the network; the plain types do not. */
function connectionOf(type: string): ConnectionType | undefined {
  if (type.endsWith('_LTE')) return '4G';
  if (type.endsWith('_WCDMA')) return '3G';
  return undefined;
}

function decodePosition(type: string, data: string): DecodedPosition | undefined {
  const m = POSITION.exec(data);
  if (!m) return undefined;
  const [, dd, mo, yy, hh, mi, ss] = m.map(Number) as number[];
  const fixTime = new Date(Date.UTC(2000 + yy!, mo! - 1, dd!, hh!, mi!, ss!));
  if (Number.isNaN(fixTime.getTime()) || fixTime.getUTCDate() !== dd || fixTime.getUTCMonth() !== mo! - 1 || hh! > 23 || mi! > 59 || ss! > 59) return undefined;
  let latitude = Number(m[8]);
  let longitude = Number(m[10]);
  if (m[9] === 'S') latitude = -Math.abs(latitude);
  if (m[11] === 'W') longitude = -Math.abs(longitude);
  if (!(Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180)) return undefined;
  const status = Number.parseInt(m[20]!, 16);
  const rssi = Number(m[16]);
  const attributes: Record<string, AttributeValue> = {
    rssi,
    batteryLevel: Number(m[17]),
    steps: Number(m[18]),
    status: m[20]!,
  };
  const alarm = watchAlarm(status);
  if (alarm) attributes.alarm = alarm;
  if (status & 0x10) attributes.motion = true;
  const cells = (m[21] ?? '').split(',');
  if (cells[0] && /^\d+$/.test(cells[0])) attributes.cellCount = Number(cells[0]);
  const position: DecodedPosition = {
    fixTime,
    valid: m[7] === 'A',
    latitude,
    longitude,
    speedKmh: Number(m[12]),
    heading: Number(m[13]) % 360,
    altitude: Number(m[14]),
    satellites: Number(m[15]),
    signalStrength: signal(rssi),
    attributes,
  };
  const connectionType = connectionOf(type);
  if (connectionType) position.connectionType = connectionType;
  return position;
}

const num = (s: string | undefined): number | undefined => (s !== undefined && /^-?\d+(\.\d+)?$/.test(s.trim()) ? Number(s.trim()) : undefined);

/** Health and link messages: a report without a fix. */
function healthReport(type: string, values: string[]): Record<string, AttributeValue> | undefined {
  const attributes: Record<string, AttributeValue> = {};
  const set = (name: string, value: number | undefined) => {
    if (value !== undefined) attributes[name] = value;
  };
  switch (type.toUpperCase()) {
    case 'LK':
      // LK,steps,tumbles,battery: only the three-value form carries the battery.
      if (values.length < 3) return undefined;
      set('steps', num(values[0]));
      set('batteryLevel', num(values[2]));
      break;
    case 'BTEMP2':
      if ((num(values[0]) ?? 0) > 0) set('temp1', num(values[1]));
      break;
    case 'TEMP':
      set('temp1', num(values[0]));
      break;
    case 'OXYGEN':
      set('bloodOxygen', num(values[values.length - 1]));
      break;
    case 'BPHRT':
    case 'BLOOD':
      set('pressureHigh', num(values[0]));
      set('pressureLow', num(values[1]));
      set('heartRate', num(values[2]));
      break;
    case 'PULSE':
    case 'HEART':
      set('heartRate', num(values[0]));
      break;
    default:
      return undefined;
  }
  return Object.keys(attributes).length > 0 ? attributes : undefined;
}

/** Link and health messages, read by healthReport. */
const HEALTH = /^(LK|PULSE|HEART|BLOOD|BPHRT|btemp2|TEMP|oxygen)$/i;

export function decodeWatch(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const h = readHeader(frame);
  session.deviceId = h.id;
  session.options.watchManufacturer = h.manufacturer;
  const out: DecodedFrame = { deviceId: h.id, positions: [] };
  const reply = (content: string) => {
    out.reply = watchFrame(h.manufacturer, h.id, content, h.index);
  };
  const type = h.type;
  if (type === 'INIT') reply('INIT,1');
  else if (type === 'TKQ' || type === 'TKQ2') reply(type);
  else if (type === 'JXTK') reply('JXTKR,1');
  else if (/^(UD|AL|WT)/.test(type)) {
    if (type.startsWith('AL')) reply('AL');
    const position = decodePosition(type, latin1.decode(h.body));
    if (position) out.positions.push(position);
    else if (type.startsWith('AL')) out.reports = [{ attributes: { alarm: 'general' } }];
  } else if (type === 'TK' || type === 'img') {
    // Voice and pictures: not stored (see the corpus deviations).
  } else if (HEALTH.test(type)) {
    if (type === 'LK') reply('LK');
    const attributes = h.body.length > 0 ? healthReport(type, latin1.decode(h.body).split(',')) : undefined;
    if (attributes) out.reports = [{ attributes }];
  } else if (type === 'CONFIG') {
    // The watch's own settings, sent unasked after connecting: kept, but no answer to a command.
    out.reports = [{ attributes: { config: latin1.decode(h.body) } }];
  } else {
    // Anything else is the watch's answer to a command (`CR`, `SOS,...`, `UPLOAD,600`): its content.
    const text = h.content;
    out.answer = { text };
    out.reports = [{ attributes: { result: text } }];
  }
  return out;
}

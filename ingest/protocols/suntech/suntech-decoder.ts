import type { CommandAnswer, DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { alertAlarm, coordinate, dateTime, dbmToSignal, emergencyAlarm, int, num, type Attributes } from './suntech-fields.ts';

/**
 * Suntech decoder. Text messages are `;`-separated fields whose first names the model and type:
 * - legacy `ST300STT;<id>;…` (ST200/300/500/600, SA200): model prefix of five characters + type;
 * - `ST4xxSTT;<id>;…`: the ST4xx layout with seven serving/neighbour cells;
 * - `ST910;<type>;<id>;…`: the personal tracker;
 * - universal `STT;<id>;<mask>;…` (ST4300 and newer firmwares): a hex mask says which fields follow;
 * - `…HTE;<id>;…`: a travel (trip) report, carrying the driver's id last.
 * Binary universal frames (second byte 0) carry the universal fields in bytes.
 *
 * Session options (per device configuration, as Traccar's): `hbm` (the legacy reports end with hour
 * meter, backup battery, archive flag, driver), `includeAdc`, `includeRpm`, `includeTemp`,
 * `protocolType` (ST910: 1 = a cell id after the time and an odometer after validity).
 */
export function decodeSuntech(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  if (frame.length >= 3 && frame[1] === 0) return decodeBinary(frame, session);
  const text = Buffer.from(frame).toString('latin1').replace(/[\r\n]+$/, '');
  const values = text.split(';');
  const prefix = values[0]!;
  if (!/^[A-Z0-9]{3,10}$/.test(prefix)) throw new MalformedFrameError('Suntech message does not start with a model or type');
  if (prefix === 'CRR') return identified(session, values[1], []);
  if (prefix.length < 5) return decodeUniversal(values, session);
  if (prefix.endsWith('HTE')) return decodeTravel(values, session);
  if (prefix.startsWith('ST9')) return decode910(values, session);
  if (prefix.startsWith('ST4')) return decode4(values, session);
  return decodeLegacy(values, session);
}

const ID = /^[0-9A-Za-z]{1,20}$/;

function identified(session: DecoderSession, id: string | undefined, positions: DecodedPosition[], reports?: DecodedReport[]): DecodedFrame {
  if (id === undefined || !ID.test(id)) throw new MalformedFrameError(`Suntech device id ${JSON.stringify(id)} is not 1–20 letters or digits`);
  session.deviceId = id;
  const out: DecodedFrame = { deviceId: id, positions };
  if (reports && reports.length > 0) out.reports = reports;
  return out;
}

/** A field cursor that refuses to read past the message. */
class Fields {
  index: number;
  constructor(
    readonly values: string[],
    start: number,
  ) {
    this.index = start;
  }
  next(field: string): string {
    const value = this.values[this.index++];
    if (value === undefined) throw new MalformedFrameError(`Suntech message ends before its ${field}`);
    return value;
  }
  has(): boolean {
    return this.index < this.values.length;
  }
}

interface Fix {
  time?: Date;
  latitude?: number;
  longitude?: number;
  valid: boolean;
  speedKmh?: number;
  heading?: number;
  satellites?: number;
  signalStrength?: number;
  attributes: Attributes;
}

/** A position where time and coordinates are known; otherwise a report of the same attributes. */
function emit(session: DecoderSession, id: string | undefined, fix: Fix, extra: Partial<DecodedFrame> = {}): DecodedFrame {
  let out: DecodedFrame;
  if (fix.time && fix.latitude !== undefined && fix.longitude !== undefined) {
    const p: DecodedPosition = { fixTime: fix.time, valid: fix.valid, latitude: fix.latitude, longitude: fix.longitude, attributes: fix.attributes };
    if (fix.speedKmh !== undefined) p.speedKmh = fix.speedKmh;
    if (fix.heading !== undefined && fix.heading >= 0 && fix.heading <= 360) p.heading = fix.heading;
    if (fix.satellites !== undefined) p.satellites = fix.satellites;
    if (fix.signalStrength !== undefined) p.signalStrength = fix.signalStrength;
    out = identified(session, id, [p]);
  } else {
    const r: DecodedReport = { attributes: fix.attributes };
    if (fix.time) r.time = fix.time;
    if (fix.signalStrength !== undefined) r.signalStrength = fix.signalStrength;
    out = identified(session, id, [], [r]);
  }
  return { ...out, ...extra };
}

function speedCourse(f: Fields, fix: Fix): void {
  fix.speedKmh = num(f.next('speed'), 'speed');
  if (fix.speedKmh < 0) throw new MalformedFrameError('Suntech speed is negative');
  fix.heading = num(f.next('course'), 'course');
}

// ---------------------------------------------------------------- legacy ST200/300/500/600, SA200

const LEGACY_TYPES = new Set(['STT', 'EMG', 'EVT', 'ALT', 'UEX']);

function decodeLegacy(values: string[], session: DecoderSession): DecodedFrame {
  const prefix = values[0]!;
  const model = prefix.slice(0, 5);
  const type = prefix.slice(5);
  const id = values[1];
  if (type === 'ALV') return identified(session, id, []);
  // A command's response repeats its header with `Res` before the id: `ST300CMD;Res;<id>;<version>;<action>`.
  if (values[1] === 'Res') return commandAnswer(values.slice(3).join(';'), session, values[2]);
  if (type === 'CMD' || type === 'RES') return commandAnswer(values.slice(2).join(';'), session, id);
  if (!LEGACY_TYPES.has(type)) return identified(session, id, []);
  const f = new Fields(values, 2);
  const fix: Fix = { valid: false, attributes: { type } };
  if (model.startsWith('ST3') || model === 'ST500' || model === 'ST600') f.next('model');
  fix.attributes.versionFw = f.next('firmware');
  fix.time = dateTime(f.next('date'), f.next('time'));
  if (!fix.time) throw new MalformedFrameError('Suntech date or time is not yyyymmdd;hh:mm:ss');
  if (model !== 'ST500') {
    const cell = f.next('cell id');
    if (model === 'ST600') {
      fix.attributes.cid = int(cell, 'cell id', 16);
      fix.attributes.mcc = int(f.next('mcc'), 'mcc');
      fix.attributes.mnc = int(f.next('mnc'), 'mnc');
      fix.attributes.lac = int(f.next('lac'), 'lac', 16);
      fix.attributes.rssi = int(f.next('rx level'), 'rx level');
    }
  }
  fix.latitude = coordinate(f.next('latitude'), 90, 'latitude');
  fix.longitude = coordinate(f.next('longitude'), 180, 'longitude');
  speedCourse(f, fix);
  fix.satellites = int(f.next('satellites'), 'satellites');
  fix.valid = f.next('fix') === '1';
  fix.attributes.odometer = int(f.next('odometer'), 'odometer');
  fix.attributes.power = num(f.next('power'), 'power');
  const io = f.next('io');
  if (io.length >= 6) {
    fix.attributes.ignition = io[0] === '1';
    for (let i = 1; i <= 3; i++) fix.attributes[`in${i}`] = io[i] === '1';
    fix.attributes.out1 = io[4] === '1';
    fix.attributes.out2 = io[5] === '1';
  }
  switch (type) {
    case 'STT':
      fix.attributes.status = int(f.next('mode'), 'mode');
      fix.attributes.index = int(f.next('index'), 'index');
      break;
    case 'EMG': {
      const alarm = emergencyAlarm(int(f.next('emergency'), 'emergency'));
      if (alarm) fix.attributes.alarm = alarm;
      break;
    }
    case 'EVT':
      fix.attributes.event = int(f.next('event'), 'event');
      break;
    case 'ALT': {
      const alarm = alertAlarm(int(f.next('alert'), 'alert'));
      if (alarm) fix.attributes.alarm = alarm;
      break;
    }
    case 'UEX':
      extendedData(f, fix.attributes);
      f.next('checksum');
      break;
  }
  if (session.options.hbm) hourMeterTail(f, fix.attributes, session);
  return emit(session, id, fix);
}

/**
 * UEX extended data: a byte count, then that many bytes of fields (which may hold `;`): a Cab
 * fuel message, a GTSL driver login, `t_N=`/`N_N=`/`Q_D=` sensor pairs in hex, or free text such
 * as an RFID read or a greeting, kept as `serial`.
 */
function extendedData(f: Fields, attributes: Attributes): void {
  let remaining = int(f.next('extended data length'), 'extended data length');
  let totalFuel = 0;
  while (remaining > 0 && f.has()) {
    const item = f.next('extended data');
    remaining -= item.length + 1;
    if (item.startsWith('CabAVL')) {
      const data = item.split(',');
      const fuel1 = Number(data[2]);
      const fuel2 = Number(data[3]);
      if (fuel1 > 0) (attributes.fuel1 = fuel1), (totalFuel += fuel1);
      if (fuel2 > 0) (attributes.fuel2 = fuel2), (totalFuel += fuel2);
    } else if (item.startsWith('GTSL')) {
      const driver = item.split('|')[4];
      if (driver) attributes.driverUniqueId = driver;
    } else if (/^[tNQ]_\w=/.test(item)) {
      const [name, raw] = item.split('=') as [string, string];
      const value = parseInt(raw.trim().split('.')[0]!, 16);
      if (!Number.isFinite(value)) continue;
      if (name[0] === 't') attributes[`temp${name[2]}`] = value;
      else if (name[0] === 'N') (attributes[`fuel${name[2]}`] = value), (totalFuel += value);
      else attributes.drivingQuality = value;
    } else if (item.trim() !== '') {
      attributes.serial = item.trim();
    }
  }
  if (totalFuel > 0) attributes.fuel = totalFuel;
}

/** The hour-meter tail of legacy reports (device option `hbm`). */
function hourMeterTail(f: Fields, attributes: Attributes, session: DecoderSession): void {
  const values = f.values;
  if (f.has()) attributes.hours = int(f.next('hour meter'), 'hour meter') * 60_000;
  if (f.has()) attributes.battery = num(f.next('battery'), 'battery');
  if (f.has() && f.next('archive') === '0') attributes.archive = true;
  if (session.options.includeAdc) {
    for (let i = 1; i <= 3; i++) {
      if (!f.has()) break;
      const v = f.next('adc');
      if (v !== '') attributes[`adc${i}`] = num(v, 'adc');
    }
  }
  if (session.options.includeRpm && f.has()) attributes.rpm = int(f.next('rpm'), 'rpm');
  if (values.length - f.index >= 2) {
    const driver = f.next('driver');
    const flag = f.next('driver flag');
    if ((flag === '0' || flag === '1') && driver !== '' && /^[0-9A-Fa-f]+$/.test(driver) && driver.length >= 8) attributes.driverUniqueId = driver;
  }
  if (session.options.includeTemp) {
    for (let i = 1; i <= 3 && f.has(); i++) {
      const sensor = f.next('temperature');
      const value = sensor.slice(sensor.indexOf(':') + 1);
      if (value !== '' && Number.isFinite(Number(value))) attributes[`temp${i}`] = Number(value);
    }
  }
}

// ---------------------------------------------------------------- ST4xx

function decode4(values: string[], session: DecoderSession): DecodedFrame {
  const type = values[0]!.slice(5);
  const id = values[1];
  if (type === 'ALV') return identified(session, id, []);
  if (type !== 'STT' && type !== 'ALT') return identified(session, id, []);
  const f = new Fields(values, 2);
  const fix: Fix = { valid: false, attributes: { type } };
  fix.attributes.versionFw = f.next('firmware');
  f.next('model');
  // Newer firmwares put one more field before the cells: the first cell's fourth field is its dBm.
  if (!(values[f.index + 3] ?? '').startsWith('-') && (values[f.index + 4] ?? '').startsWith('-')) f.next('cell count');
  for (let i = 0; i < 7; i++) {
    const cid = int(f.next('cell id'), 'cell id');
    const mcc = int(f.next('mcc'), 'mcc');
    const mnc = int(f.next('mnc'), 'mnc');
    let lac: number, rssi: number;
    if (i === 0) {
      rssi = int(f.next('rssi'), 'rssi');
      lac = int(f.next('lac'), 'lac');
    } else {
      lac = int(f.next('lac'), 'lac');
      rssi = int(f.next('rssi'), 'rssi');
    }
    f.next('timing advance');
    if (i === 0 && cid > 0) {
      Object.assign(fix.attributes, { cid, mcc, mnc, lac, rssi });
      const signal = dbmToSignal(rssi);
      if (signal !== undefined) fix.signalStrength = signal;
    }
  }
  fix.attributes.battery = num(f.next('battery'), 'battery');
  if (f.next('archive') === '0') fix.attributes.archive = true;
  fix.attributes.index = int(f.next('index'), 'index');
  fix.attributes.status = int(f.next('status'), 'status');
  // Then a collaborative-network field, and on newer firmwares further status fields, before the
  // date and time: the fix starts at the first yyyymmdd;hh:mm:ss pair.
  let at = f.index;
  while (at + 1 < values.length && !dateTime(values[at], values[at + 1])) at++;
  if (at + 1 < values.length) fix.time = dateTime(values[at], values[at + 1]);
  if (fix.time) {
    f.index = at + 2;
    fix.latitude = coordinate(f.next('latitude'), 90, 'latitude');
    fix.longitude = coordinate(f.next('longitude'), 180, 'longitude');
    speedCourse(f, fix);
    fix.satellites = int(f.next('satellites'), 'satellites');
    fix.valid = f.next('fix') === '1';
  }
  return emit(session, id, fix);
}

// ---------------------------------------------------------------- ST910

function decode910(values: string[], session: DecoderSession): DecodedFrame {
  const type = values[1];
  const id = values[2];
  if (type !== 'Location' && type !== 'Emergency' && type !== 'Alert') return identified(session, id, []);
  const protocolType = Number(session.options.protocolType ?? 0);
  const f = new Fields(values, 3);
  const fix: Fix = { valid: false, attributes: {} };
  if (type !== 'Location') fix.attributes.alarm = 'general';
  if (type !== 'Alert' || protocolType === 0) fix.attributes.versionFw = f.next('firmware');
  fix.time = dateTime(f.next('date'), f.next('time'));
  if (!fix.time) throw new MalformedFrameError('Suntech date or time is not yyyymmdd;hh:mm:ss');
  if (protocolType === 1) f.next('cell');
  fix.latitude = coordinate(f.next('latitude'), 90, 'latitude');
  fix.longitude = coordinate(f.next('longitude'), 180, 'longitude');
  speedCourse(f, fix);
  fix.valid = f.next('fix') === '1';
  if (protocolType === 1) fix.attributes.odometer = int(f.next('odometer'), 'odometer');
  return emit(session, id, fix);
}

// ---------------------------------------------------------------- travel report

function decodeTravel(values: string[], session: DecoderSession): DecodedFrame {
  const attributes: Attributes = { type: 'HTE' };
  const driver = values[values.length - 1]!;
  if (driver !== '') attributes.driverUniqueId = driver;
  const time = dateTime(values[4], values[5]);
  const report: DecodedReport = time ? { time, attributes } : { attributes };
  return identified(session, values[1], [], [report]);
}

// ---------------------------------------------------------------- universal

/** BLE reports carry model, firmware, date, time, latitude and longitude (bits 1, 2, 4, 5, 11, 12). */
const BLE_MASK = 0b1100000110110;

function bit(mask: number, n: number): boolean {
  return Math.floor(mask / 2 ** n) % 2 === 1;
}

/** Input and output states: eight 0/1 characters, input 1 (ignition) last; older firmwares send a number. */
function ioState(value: string, field: string): number {
  return /^[01]{8}$/.test(value) ? parseInt(value, 2) : int(value, field);
}

function decodeUniversal(values: string[], session: DecoderSession): DecodedFrame {
  const type = values[0]!;
  const id = values[1];
  // Suntech's manuals: the server ACKs reports only over UDP (UDP_ACK), and never the keep-alive; over
  // TCP nothing is answered.
  if (type === 'ALV') return identified(session, id, []);
  if (type === 'RES' || type === 'CMD') return commandAnswer(values.slice(2).join(';'), session, id);
  if (type !== 'STT' && type !== 'ALT' && type !== 'BLE' && type !== 'UEX' && type !== 'EVT' && type !== 'EMG') return identified(session, id, []);
  const f = new Fields(values, 2);
  const mask = type === 'BLE' ? BLE_MASK : int(f.next('mask'), 'mask', 16);
  const fix: Fix = { valid: false, attributes: { type } };
  if (bit(mask, 1)) f.next('model');
  if (bit(mask, 2)) fix.attributes.versionFw = f.next('firmware');
  if (bit(mask, 3) && f.next('archive') === '0') fix.attributes.archive = true;
  if (bit(mask, 4) && bit(mask, 5)) {
    fix.time = dateTime(f.next('date'), f.next('time'));
    if (!fix.time) throw new MalformedFrameError('Suntech date or time is not yyyymmdd;hh:mm:ss');
  }
  if (bit(mask, 6)) fix.attributes.cid = int(f.next('cell id'), 'cell id', 16);
  if (bit(mask, 7)) fix.attributes.mcc = int(f.next('mcc'), 'mcc');
  if (bit(mask, 8)) fix.attributes.mnc = int(f.next('mnc'), 'mnc');
  if (bit(mask, 9)) fix.attributes.lac = int(f.next('lac'), 'lac', 16);
  if (bit(mask, 10)) fix.attributes.rssi = int(f.next('rx level'), 'rx level');
  if (bit(mask, 11)) fix.latitude = coordinate(f.next('latitude'), 90, 'latitude');
  if (bit(mask, 12)) fix.longitude = coordinate(f.next('longitude'), 180, 'longitude');
  if (type === 'BLE') {
    fix.valid = true;
    const count = int(f.next('tag count'), 'tag count');
    for (let i = 1; i <= count; i++) {
      fix.attributes[`tag${i}Rssi`] = int(f.next('tag rssi'), 'tag rssi');
      f.next('tag rssi min');
      f.next('tag rssi max');
      fix.attributes[`tag${i}Id`] = f.next('tag id');
      fix.attributes[`tag${i}Samples`] = int(f.next('tag samples'), 'tag samples');
      fix.attributes[`tag${i}Major`] = int(f.next('tag major'), 'tag major');
      fix.attributes[`tag${i}Minor`] = int(f.next('tag minor'), 'tag minor');
    }
    return emit(session, id, fix);
  }
  if (bit(mask, 13)) {
    fix.speedKmh = num(f.next('speed'), 'speed');
    if (fix.speedKmh < 0) throw new MalformedFrameError('Suntech speed is negative');
  }
  if (bit(mask, 14)) fix.heading = num(f.next('course'), 'course');
  if (bit(mask, 15)) fix.satellites = int(f.next('satellites'), 'satellites');
  if (bit(mask, 16)) fix.valid = f.next('fix') === '1';
  if (bit(mask, 17)) {
    const input = ioState(f.next('input'), 'input');
    fix.attributes.input = input;
    fix.attributes.ignition = input % 2 === 1;
  }
  if (bit(mask, 18)) fix.attributes.output = ioState(f.next('output'), 'output');
  if (type === 'UEX') {
    extendedData(f, fix.attributes);
    return emit(session, id, fix);
  }
  if (type === 'ALT') {
    if (bit(mask, 19)) {
      const alertId = f.next('alert id');
      fix.attributes.alertId = alertId;
      const alarm = alertAlarm(Number(alertId));
      if (alarm) fix.attributes.alarm = alarm;
    }
    if (bit(mask, 20)) fix.attributes.alertModifier = f.next('alert modifier');
    if (bit(mask, 21)) fix.attributes.alertData = f.next('alert data');
  } else {
    if (bit(mask, 19)) fix.attributes.mode = int(f.next('mode'), 'mode');
    if (bit(mask, 20)) fix.attributes.reason = int(f.next('reason'), 'reason');
    if (bit(mask, 21)) fix.attributes.index = int(f.next('index'), 'index');
  }
  if (bit(mask, 22)) f.next('reserved');
  if (bit(mask, 23)) {
    const assignMask = int(f.next('assign mask'), 'assign mask', 16);
    for (let i = 0; i <= 30; i++) if (bit(assignMask, i)) fix.attributes[`assign${i + 1}`] = f.next('assigned field');
  } else {
    // Fields configured for the report without the assign mask follow in order.
    let n = 1;
    while (f.has()) {
      const v = f.next('assigned field');
      if (v !== '') fix.attributes[`assign${n++}`] = v;
    }
  }
  return emit(session, id, fix);
}

// ---------------------------------------------------------------- binary universal

function decodeBinary(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const buf = Buffer.from(frame);
  let o = 0;
  const need = (n: number) => {
    if (o + n > buf.length) throw new MalformedFrameError('Suntech binary frame ends before its fields');
  };
  const u8 = () => (need(1), buf.readUInt8(o++));
  const u16 = () => (need(2), (o += 2), buf.readUInt16BE(o - 2));
  const u24 = () => (need(3), (o += 3), buf.readUIntBE(o - 3, 3));
  const u32 = () => (need(4), (o += 4), buf.readUInt32BE(o - 4));
  const type = u8();
  u16();
  need(5);
  const id = buf.subarray(o, o + 5).toString('hex');
  o += 5;
  const mask = u24();
  const fix: Fix = { valid: false, attributes: {} };
  if (bit(mask, 1)) u8();
  if (bit(mask, 2)) fix.attributes.versionFw = `${u8()}.${u8()}.${u8()}`;
  if (bit(mask, 3) && u8() === 0) fix.attributes.archive = true;
  if (bit(mask, 4) && bit(mask, 5)) {
    const [y, mo, d, h, mi, s] = [u8(), u8(), u8(), u8(), u8(), u8()];
    fix.time = dateTime(`${2000 + y}${String(mo).padStart(2, '0')}${String(d).padStart(2, '0')}`, [h, mi, s].map((v) => String(v).padStart(2, '0')).join(':'));
  }
  if (bit(mask, 6)) fix.attributes.cid = u32();
  if (bit(mask, 7)) fix.attributes.mcc = u16();
  if (bit(mask, 8)) fix.attributes.mnc = u16();
  if (bit(mask, 9)) fix.attributes.lac = u16();
  if (bit(mask, 10)) fix.attributes.rssi = u8();
  const signed = (v: number) => (v >= 0x80000000 ? -(v - 0x80000000) : v) / 1e6;
  if (bit(mask, 11)) fix.latitude = signed(u32());
  if (bit(mask, 12)) fix.longitude = signed(u32());
  if (fix.latitude !== undefined && Math.abs(fix.latitude) > 90) throw new MalformedFrameError('Suntech latitude out of range');
  if (fix.longitude !== undefined && Math.abs(fix.longitude) > 180) throw new MalformedFrameError('Suntech longitude out of range');
  if (bit(mask, 13)) fix.speedKmh = u16() / 100;
  if (bit(mask, 14)) fix.heading = u16() / 100;
  if (bit(mask, 15)) fix.satellites = u8();
  if (bit(mask, 16)) fix.valid = u8() > 0;
  if (bit(mask, 17)) {
    const input = u8();
    fix.attributes.ignition = input % 2 === 1;
    fix.attributes.input = input;
  }
  if (bit(mask, 18)) fix.attributes.output = u8();
  let alertId = 0;
  if (bit(mask, 19)) {
    alertId = u8();
    if (type === 0x82) {
      const alarm = alertAlarm(alertId);
      if (alarm) fix.attributes.alarm = alarm;
    }
  }
  if (bit(mask, 20)) u16();
  if (bit(mask, 21) && alertId === 59) {
    need(8);
    fix.attributes.driverUniqueId = buf.subarray(o, o + 8).toString('hex');
    o += 8;
  }
  return emit(session, id, fix);
}

// ---------------------------------------------------------------- command answers

/**
 * `RES;<id>;<command>;<sub>;<text>` (universal), `ST300CMD;Res;<id>;<version>;<action>` (legacy
 * response) or an echoed `…CMD;<id>;02;Enable1`: the text after the id is the answer.
 */
function commandAnswer(text: string, session: DecoderSession, id: string | undefined): DecodedFrame {
  const answer: CommandAnswer = { text };
  return { ...identified(session, id, [], [{ attributes: { result: text } }]), answer };
}

import { newReport, readBcdDateTime, readDateTime, readGps } from './gt06-fix.ts';
import { ack, emit, buildFrame, type Gt06Message, type Gt06Result, type Gt06Record } from './gt06-message.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { ascii, hex } from './gt06-text.ts';
import { alarmName, applyGsmLevel, applyTerminalInfo, batteryLevel } from './gt06-status.ts';

/** 0x13 status / heartbeat. Its body differs by firmware, so the layout is chosen by length and model. */
export function decodeStatus(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport();
  if (r.remaining >= 14) decodeLongStatus(p, r);
  else if (r.remaining >= 5 && msg.model === 'R11') {
    applyTerminalInfo(p, r.u8());
    p.attributes.power = r.u16() / 100;
  } else if (r.remaining >= 5 && msg.model === 'SEEWORLD') {
    applyTerminalInfo(p, r.u8());
    r.skip(2);
    p.attributes.power = r.u8(); // whole volts
  } else if (r.remaining >= 5 && msg.model === 'LW4G-4B') {
    applyTerminalInfo(p, r.u8());
    r.skip(3);
    p.attributes.power = r.u8() / 10;
  } else {
    applyTerminalInfo(p, r.u8());
    if (r.remaining >= 1) p.attributes.batteryLevel = batteryLevel(r.u8());
    if (r.remaining >= 1) applyGsmLevel(p, r.u8());
    if (r.remaining >= 1) {
      const alarm = alarmName(r.u8());
      if (alarm) p.attributes.alarm = alarm;
    }
  }
  return emit(p, ack(msg));
}

/** Long status (14+ bytes): battery %, supply voltage and a signed temperature in the last word. */
function decodeLongStatus(p: Gt06Record, r: ByteReader): void {
  const end = r.end;
  r.u8(); // information content
  r.u16(); // satellites
  r.u8(); // alarm
  r.u8(); // language
  p.attributes.batteryLevel = r.u8();
  r.u8(); // working mode
  p.attributes.power = r.u16() / 100;
  r.offset = end - 2;
  const t = r.u16();
  p.attributes.temp1 = ((t & 0x8000 ? -1 : 1) * (t & 0x7fff)) / 10;
}

/** 0x23 heartbeat (GK310 and later): terminal info, battery volts, GSM signal. */
export function decodeHeartbeat(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport();
  const status = r.u8();
  p.attributes.armed = (status & 0x01) !== 0;
  p.attributes.ignition = (status & 0x02) !== 0;
  p.attributes.charge = (status & 0x04) !== 0;
  if (r.remaining >= 2) p.attributes.battery = r.u16() / 100;
  if (r.remaining >= 1) applyGsmLevel(p, r.u8());
  return emit(p, ack(msg));
}

/** 0x8A: the device asks for the time; answer with UTC now, no position. */
export function decodeTimeRequest(msg: Gt06Message, now = new Date()): Gt06Result {
  const t = Uint8Array.of(now.getUTCFullYear() - 2000, now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds());
  return { positions: [], reply: buildFrame(0x8a, msg.serial, t) };
}

/** 0x2A: the device asks for a street address; we have none to give, and say so. */
export function decodeAddressRequest(): Gt06Result {
  const text = Buffer.from('NA&&NA&&0##', 'ascii');
  const content = new Uint8Array(5 + text.length);
  content[0] = text.length;
  content.set(text, 5);
  return { positions: [], reply: buildFrame(0x97, 0, content, true) };
}

/** 0x94 in a short frame: external supply voltage only. */
export function decodeBasicInfo(msg: Gt06Message): Gt06Result {
  const p = newReport();
  p.attributes.power = msg.body.i16() / 100;
  return emit(p, ack(msg));
}

/** 0x15: the device's text answer to a server command (or its ICCID). */
export function decodeString(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const length = r.u8();
  if (length > r.remaining) return { positions: [], reply: ack(msg) };
  // Some firmwares leave the length at 0 and pad the text with NULs instead.
  const textLength = length >= 4 ? length - 4 : r.remaining - 4;
  const serverFlag = r.u32(); // echoed from the command it answers
  const text = ascii(r.slice(Math.max(0, textLength))).replace(/\0[\s\S]*$/, '');
  if (!text) return { positions: [], reply: ack(msg) };
  const p = newReport();
  if (text.startsWith('<ICCID:')) {
    p.attributes.iccid = text.slice(7, 27);
    return emit(p, ack(msg));
  }
  p.attributes.result = text;
  return { ...emit(p, ack(msg)), answer: { text, serial: serverFlag } };
}

const ALARMS_95 = new Map<number, string>([
  [0x80, 'vibration'],
  [0x87, 'overspeed'],
  [0x90, 'hardAcceleration'],
  [0x91, 'hardBraking'],
  [0x92, 'hardCornering'],
  [0x93, 'accident'],
]);

/** 0x95 (JC100 dash cameras): an alarm, with a fix in the longer form and video file names after it. */
export function decodeAlarm(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  if (r.peek(0) === 0xff && r.peek(1) === 0xff) return decodeCameraEvent(msg);
  const withFix = r.remaining > 7;
  const p = withFix ? readGps(r, msg.state, { satellites: false, speed: false })! : newReport(readDateTime(r, msg.state));
  const code = r.u8();
  p.attributes.alarm = code === 0x01 ? (withFix ? 'sos' : 'general') : (ALARMS_95.get(code) ?? 'general');
  if (r.remaining > 2) {
    r.skip(2);
    const files = ascii(r.slice(r.remaining)).replace(/\0+$/, '');
    if (files) p.attributes.eventFiles = files;
  }
  return emit(p, ack(msg));
}

/** 0x95 with an 0xFFFF marker (newer JC cameras): full fix, event code, then the video file list. */
function decodeCameraEvent(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  r.skip(3);
  const p = readGps(r, msg.state, { speed: false })!;
  r.skip(4); // speed and mileage fields not documented for this form
  const code = r.u8();
  p.attributes.event = code;
  const alarm = ALARMS_95.get(code);
  if (alarm) p.attributes.alarm = alarm;
  if (r.remaining > 2) {
    r.skip(2);
    const files = ascii(r.slice(r.remaining)).replace(/\0+$/, '');
    if (files) p.attributes.eventFiles = files;
  }
  return emit(p, ack(msg));
}

/** 0x34 (X1): alarm word, fix, odometer, cell, driver id, battery and supply volts, inputs, ADCs. */
export function decodeX1Gps(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  r.u32(); // data and alarm flags
  const p = readGps(r, msg.state)!;
  r.u16(); // terminal info
  p.attributes.odometer = r.u32();
  r.skip(2 + 1 + 2 + 4); // cell tower
  const driver = r.u32();
  if (driver > 0) p.attributes.driverUniqueId = String(driver);
  p.attributes.battery = r.u16() / 100;
  p.attributes.power = r.u16() / 100;
  const ports = r.u32();
  p.attributes.input = r.u8();
  p.attributes.output = r.u8();
  const adcs = (ports >>> 20) & 0x0f;
  for (let i = 1; i <= adcs && r.remaining >= 2; i++) p.attributes[`adc${i}`] = r.u16() / 100;
  return emit(p, ack(msg));
}

/**
 * 0x17 / 0x69 / 0xF3 WiFi scans. These firmwares put the access-point count where the length
 * belongs and end the frame without serial or CRC, so the body runs to the CR LF.
 */
export function decodeWifi(msg: Gt06Message, frame: Uint8Array): Gt06Result {
  const r = new ByteReader(frame, 4, Math.max(4, frame.length - 2));
  const timeBytes = frame.subarray(4, 10);
  const p = newReport(readBcdDateTime(r, msg.state));
  const count = msg.type === 0xf3 ? r.u8() : frame[2]!;
  const macs: string[] = [];
  for (let i = 0; i < count; i++) {
    if (msg.type === 0xf3) r.skip(2);
    macs.push(hex(r.slice(6)));
    if (msg.type !== 0xf3) r.u8(); // signal strength
  }
  if (macs.length > 0) p.attributes.wifi = macs.join(',');
  if (msg.type === 0xf3) return emit(p);
  // These firmwares expect their own time echoed in a CRC-less frame, not the usual acknowledgement.
  const reply = new Uint8Array(12);
  reply.set([0x78, 0x78, 0x00, msg.type]);
  reply.set(timeBytes, 4);
  reply.set([0x0d, 0x0a], 10);
  return emit(p, reply);
}

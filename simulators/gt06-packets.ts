import { crc16X25 } from '../ingest/codec/crc16.ts';
import type { SimulatedFix } from './teltonika-packets.ts';

/** A GT06 frame: 0x7878, length, type, body, serial, CRC-ITU over length..serial, CR LF. */
export function gt06Frame(type: number, body: Uint8Array, serial: number): Uint8Array {
  const length = 1 + body.length + 2 + 2;
  const frame = Buffer.alloc(2 + 1 + length + 2);
  frame[0] = 0x78;
  frame[1] = 0x78;
  frame[2] = length;
  frame[3] = type;
  Buffer.from(body).copy(frame, 4);
  frame.writeUInt16BE(serial & 0xffff, 4 + body.length);
  frame.writeUInt16BE(crc16X25(frame, 2, 6 + body.length), 6 + body.length);
  frame[8 + body.length] = 0x0d;
  frame[9 + body.length] = 0x0a;
  return frame;
}

/** The long GT06 frame (0x7979, 2-byte length) that information messages use. */
export function gt06LongFrame(type: number, body: Uint8Array, serial: number): Uint8Array {
  const length = 1 + body.length + 2 + 2;
  const frame = Buffer.alloc(2 + 2 + length + 2);
  frame[0] = 0x79;
  frame[1] = 0x79;
  frame.writeUInt16BE(length, 2);
  frame[4] = type;
  Buffer.from(body).copy(frame, 5);
  frame.writeUInt16BE(serial & 0xffff, 5 + body.length);
  frame.writeUInt16BE(crc16X25(frame, 2, 7 + body.length), 7 + body.length);
  frame[9 + body.length] = 0x0d;
  frame[10 + body.length] = 0x0a;
  return frame;
}

/** Login (0x01): the IMEI as 8 packed BCD bytes, a leading 0 making 16 digits. */
export function gt06Login(imei: string, serial = 1): Uint8Array {
  return gt06Frame(0x01, Buffer.from(`0${imei}`.padStart(16, '0'), 'hex'), serial);
}

/**
 * A fix as GT06N and Concox devices send it: UTC time, 1/1,800,000° units, km/h. GPS + LBS (0x22)
 * normally; once its relay output is known (a command set it), GPS + LBS + status (0x16), whose
 * terminal-information byte carries the relay's state (bit 7, oil and power cut) beside the ACC line.
 */
export function gt06Location(fix: SimulatedFix, serial: number): Uint8Array {
  const withStatus = fix.outputs !== undefined;
  const body = Buffer.alloc(6 + 1 + 4 + 4 + 1 + 2 + 9 + 5);
  const t = fix.time;
  let at = 0;
  for (const v of [t.getUTCFullYear() - 2000, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()]) body[at++] = v;
  body[at++] = 0xc0 | Math.min(15, fix.satellites);
  body.writeUInt32BE(Math.round(Math.abs(fix.latitude) * 1_800_000), at); at += 4;
  body.writeUInt32BE(Math.round(Math.abs(fix.longitude) * 1_800_000), at); at += 4;
  body[at++] = Math.min(255, Math.round(fix.speedKmh));
  // Course in bits 0-9; bit 10 north, bit 11 west, bit 12 positioned.
  const flags = (Math.round(fix.heading) % 360) | (fix.latitude >= 0 ? 0x0400 : 0) | (fix.longitude < 0 ? 0x0800 : 0) | (fix.satellites > 0 ? 0x1000 : 0);
  body.writeUInt16BE(flags, at); at += 2;
  if (withStatus) body[at++] = 8; // LBS block length
  body.writeUInt16BE(334, at); at += 2; // MCC (Mexico)
  body[at++] = 20; // MNC
  body.writeUInt16BE(0x1234, at); at += 2; // LAC
  body.writeUIntBE(0x00abcd, at, 3); at += 3; // cell id
  if (withStatus) {
    body[at++] = 0x40 | (fix.outputs!.out1 ? 0x80 : 0) | (fix.ignition ? 0x02 : 0); // terminal info: GPS on, relay, ACC
    body[at++] = 6; // voltage level
    body[at++] = 4; // GSM signal
    body[at++] = 0; // no alarm
    body[at++] = 0x02; // English
    return gt06Frame(0x16, body.subarray(0, at), serial);
  }
  body[at++] = fix.ignition ? 1 : 0; // ACC
  body[at++] = 0; // upload mode: fixed interval
  body[at++] = 0; // real time, not from the device's memory
  return gt06Frame(0x22, body.subarray(0, at), serial);
}

/** The server's answer to a GT06 message: type and serial echoed; undefined while incomplete. */
export function readGt06Answer(received: Uint8Array): { consumed: number; type: number } | undefined {
  if (received.length < 10) return undefined;
  return { consumed: 5 + received[2]!, type: received[3]! };
}

/** What the server sends a GT06 device: the answer to one of its messages, or an online command (0x80). */
export type Gt06ServerMessage = { consumed: number } & ({ kind: 'ack'; type: number } | { kind: 'command'; text: string; serverFlag: number });

/** The server message at the start of `received` (a 0x7878 or, for long commands, 0x7979 frame), or undefined while incomplete. */
export function readGt06ServerMessage(received: Uint8Array): Gt06ServerMessage | undefined {
  if (received.length < 5) return undefined;
  const extended = received[0] === 0x79;
  const head = extended ? 4 : 3;
  const length = extended ? (received[2]! << 8) | received[3]! : received[2]!;
  const consumed = head + length + 2;
  if (received.length < consumed) return undefined;
  const type = received[head]!;
  if (type !== 0x80) return { kind: 'ack', consumed, type };
  // Content: its length (server flag + text), the 4-byte server flag, the text, the language word.
  const view = Buffer.from(received.buffer, received.byteOffset, consumed);
  const commandLength = view[head + 1]!;
  const serverFlag = view.readUInt32BE(head + 2);
  const text = view.subarray(head + 6, head + 2 + commandLength).toString('latin1');
  return { kind: 'command', consumed, text, serverFlag };
}

/** The device's text answer to a command (0x15): the server flag it came with, then the text. */
export function gt06CommandAnswer(serverFlag: number, text: string, serial: number): Uint8Array {
  const content = Buffer.alloc(1 + 4 + text.length + 2);
  content[0] = 4 + text.length;
  content.writeUInt32BE(serverFlag >>> 0, 1);
  content.write(text, 5, 'latin1');
  content.writeUInt16BE(0x0002, 5 + text.length); // English
  return gt06Frame(0x15, content, serial);
}

/**
 * Heartbeat with status (0x13), as GT06 devices send every few minutes between fixes: terminal info
 * (bit 1 ACC), voltage level 0–6, GSM signal 0–4, alarm code (0x01 SOS), language.
 */
export function gt06Heartbeat(status: { ignition: boolean; voltageLevel: number; gsm: number; alarmCode?: number }, serial: number): Uint8Array {
  const info = 0x40 | (status.ignition ? 0x02 : 0);
  return gt06Frame(0x13, Uint8Array.of(info, status.voltageLevel, status.gsm, status.alarmCode ?? 0, 0x02), serial);
}

/** Information (0x94) sub-type 0x0B: the radio network in use, 0 for 2G and 1 for 4G, as Concox 4G models send it. */
export function gt06NetworkTechnology(technology: '2G' | '4G', serial: number): Uint8Array {
  return gt06LongFrame(0x94, Uint8Array.of(0x0b, technology === '2G' ? 0 : 1), serial);
}

/**
 * Heartbeat with battery (0x23, GK310 and later): terminal info (bit 1 ACC), the backup battery in
 * hundredths of a volt, GSM signal 0–4.
 */
export function gt06BatteryHeartbeat(status: { ignition: boolean; battery: number; gsm: number }, serial: number): Uint8Array {
  const body = Buffer.alloc(4);
  body[0] = status.ignition ? 0x02 : 0;
  body.writeUInt16BE(Math.round(status.battery * 100), 1);
  body[3] = status.gsm;
  return gt06Frame(0x23, body, serial);
}

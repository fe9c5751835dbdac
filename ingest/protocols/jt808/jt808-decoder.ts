import type { DecodedFrame, DecoderSession } from '../../protocol.ts';
import { decodeCameraAnswer, decodeCommandText, decodeLocationAnswer, decodeTerminalResponse, decodeTextAnswer, decodeTextReport } from './jt808-answers.ts';
import { readLocation } from './jt808-location.ts';
import { generalResponse, newReport, parseMessage, placeRecord, replyTo, type Jt808Message, type Jt808Result } from './jt808-message.ts';
import { decodeMediaUpload } from './jt808-photo.ts';
import { decodeTextFrame } from './jt808-text.ts';
import { decodeTransparent } from './jt808-transparent.ts';
import { decodeAcceleration, decodeBatch2, decodeDriverIdentity, decodeElockLocation } from './jt808-vendor-messages.ts';
import { ByteReader } from '../../codec/byte-reader.ts';

/** Bit 15 of the body properties, reserved by the standard: the e-locks' 0x5501 sets it to ask for an answer. */
const ANSWER_WANTED = 0x8000;

/**
 * 0x8100 registration answer: the serial of the registration, result 0, and the authentication code
 * the terminal sends back in 0x0102. We identify terminals by their number, so the code is that number.
 */
function decodeRegistration(msg: Jt808Message): Jt808Result {
  const code = new TextEncoder().encode(msg.deviceId);
  const body = new Uint8Array(3 + code.length);
  body[0] = msg.serial >> 8;
  body[1] = msg.serial & 0xff;
  body[2] = 0;
  body.set(code, 3);
  return { positions: [], reply: replyTo(msg, 0x8100, body) };
}

/** 0x0002 heartbeat: bare, or with battery level, signal and a status byte on some firmwares. */
function decodeHeartbeat(msg: Jt808Message): Jt808Result {
  const result: Jt808Result = { positions: [], reply: generalResponse(msg) };
  const r = msg.body;
  if (r.remaining >= 3) result.reports = [newReport({ batteryLevel: r.u8(), rssi: r.u8(), status: r.u8() })];
  return result;
}

function decodeLocationReport(msg: Jt808Message): Jt808Result {
  const result: Jt808Result = { positions: [], reply: generalResponse(msg) };
  placeRecord(readLocation(msg.body), result);
  return result;
}

/** 0x0704 batch of stored or current locations: count, type (1: blind-area backlog), each with a length. */
function decodeBatch(msg: Jt808Message): Jt808Result {
  const result: Jt808Result = { positions: [], reply: generalResponse(msg) };
  const r = msg.body;
  r.u16(); // count
  const backlog = r.u8() > 0;
  while (r.remaining >= 2) {
    const length = r.u16();
    const p = readLocation(new ByteReader(r.slice(length)));
    if (backlog) p.attributes.archive = true;
    placeRecord(p, result);
  }
  return result;
}

/** 0x0107 terminal attributes: type, maker, model, terminal id, then the SIM's ICCID (10 BCD bytes). */
function decodeAttributes(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  r.skip(2 + 5 + 20 + 7);
  return { positions: [], reports: [newReport({ iccid: Buffer.from(r.slice(10)).toString('hex') })], reply: generalResponse(msg) };
}

/** 0x0109 time request: the UTC time now, and result 0. */
function decodeTimeRequest(msg: Jt808Message, now: Date): Jt808Result {
  const year = now.getUTCFullYear();
  const body = Uint8Array.of(year >> 8, year & 0xff, now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds(), 0);
  return { positions: [], reply: replyTo(msg, 0x8109, body) };
}

function decodeMessage(msg: Jt808Message, now: Date): Jt808Result {
  switch (msg.id) {
    case 0x0001:
      return decodeTerminalResponse(msg);
    case 0x0002:
      return decodeHeartbeat(msg);
    case 0x0100:
      return decodeRegistration(msg);
    case 0x0107:
      return decodeAttributes(msg);
    case 0x0109:
      return decodeTimeRequest(msg, now);
    case 0x0200:
      return decodeLocationReport(msg);
    case 0x0201:
    case 0x0500:
      return decodeLocationAnswer(msg);
    case 0x0210:
      return decodeBatch2(msg, generalResponse(msg));
    case 0x0701:
      return decodeCommandText(msg);
    case 0x0702:
      return decodeDriverIdentity(msg, generalResponse(msg));
    case 0x0704:
      return decodeBatch(msg);
    case 0x0801:
      return decodeMediaUpload(msg);
    case 0x0805:
      return decodeCameraAnswer(msg);
    case 0x0900:
      return decodeTransparent(msg);
    case 0x1300:
      return decodeTextAnswer(msg);
    case 0x2070:
      return decodeAcceleration(msg);
    case 0x5501:
    case 0x5502:
      return decodeElockLocation(msg, msg.properties & ANSWER_WANTED ? true : false);
    case 0x6006:
      return decodeTextReport(msg);
    default:
      // Authentication (0x0102), logout (0x0003), multimedia event (0x0800) and every other terminal
      // message: the general response, which is all the standard asks of the platform.
      return { positions: [], reply: generalResponse(msg) };
  }
}

/**
 * One JT/T 808 frame: every message names its terminal, so each identifies the device. `now` is the
 * clock for the time a terminal asks for (0x0109 and the e-locks' `BASE,2`).
 */
export function decodeJt808(frame: Uint8Array, session: DecoderSession, now = new Date()): DecodedFrame {
  if (frame[0] === 0x28) return decodeTextFrame(frame, session, now);
  const msg = parseMessage(frame, session);
  session.deviceId = msg.deviceId;
  return { deviceId: msg.deviceId, ...decodeMessage(msg, now) };
}

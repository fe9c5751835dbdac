import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { DecodedFrame, DecoderSession } from '../../protocol.ts';
import { decodeAddressRequest, decodeAlarm, decodeBasicInfo, decodeHeartbeat, decodeStatus, decodeString, decodeTimeRequest, decodeWifi, decodeX1Gps } from './gt06-basic.ts';
import { CELL_TYPES, decodeCells, decodeGpsDriver } from './gt06-cells.ts';
import { decodeExtendedGps, decodeInfo, decodeObd, decodeSerial, decodeStringInfo } from './gt06-extended.ts';
import { gt06Model, gt06State } from './gt06-fix.ts';
import { decodeLocation, isLocationType } from './gt06-location.ts';
import { ack, type Gt06Message, type Gt06Result } from './gt06-message.ts';
import { decodeModular } from './gt06-modular.ts';
import { decode36, decodeAz735, decodeF1, decodeF2, decodeGpsImei } from './gt06-vendor.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { hex } from './gt06-text.ts';

const LOGIN = 0x01;

/**
 * Splits a frame into header, type, body and serial, without trusting the declared length. A frame
 * as long as it declares ends in serial, CRC-ITU (over length .. serial) and CR LF. Firmwares that
 * drop serial and CRC (WiFi 0x17/0x69, short logins) send a length that does not match their frame,
 * and the framer cut them at CR LF.
 */
function parseEnvelope(frame: Uint8Array, session: DecoderSession): Gt06Message {
  const start = frame[0];
  if (frame.length < 4 || (start !== 0x78 && start !== 0x79) || frame[1] !== start) throw new MalformedFrameError('gt06: frame does not start with 0x7878 or 0x7979');
  const extended = start === 0x79;
  const head = extended ? 4 : 3;
  if (frame.length <= head) throw new MalformedFrameError('gt06: frame has no message type');
  const length = extended ? (frame[2]! << 8) | frame[3]! : frame[2]!;
  // The CRC-ITU is not enforced: firmwares in the field (and 12 of the corpus's captures) send wrong
  // ones, Traccar accepts them, and TCP already protects the bytes in transit. Refusing them would
  // only make those devices resend forever.
  const type = frame[head]!;
  // Serial (2), CRC (2), CR LF (2) close the frame; a frame too short for them has an empty body.
  const bodyEnd = Math.max(head + 1, frame.length - 6);
  const serial = frame.length - 6 > head ? (frame[frame.length - 6]! << 8) | frame[frame.length - 5]! : 0;
  return { type, extended, length, body: new ByteReader(frame, head + 1, bodyEnd), serial, frame, session, state: gt06State(session), model: gt06Model(session) };
}

/**
 * Login: IMEI as 8 BCD bytes (16 digits, leading 0 dropped), a model code, and on newer firmwares
 * a time-zone word: hours*100+minutes in the top 12 bits, bit 3 set for west of UTC.
 */
function decodeLogin(msg: Gt06Message): DecodedFrame {
  // Some firmwares send a login without serial or CRC; the IMEI is all we need from it.
  const r = msg.body.remaining >= 8 ? msg.body : new ByteReader(msg.frame, msg.body.offset, Math.max(msg.body.offset, msg.frame.length - 2));
  const imei = hex(r.slice(8)).slice(1);
  if (!/^\d+$/.test(imei)) throw new MalformedFrameError(`gt06: login IMEI ${imei} is not BCD`);
  if (r.remaining >= 4) {
    r.u16(); // model code
    const zone = r.u16();
    const minutes = Math.trunc((zone >> 4) / 100) * 60 + ((zone >> 4) % 100);
    msg.state.utcOffsetMs = (zone & 0x08 ? -minutes : minutes) * 60_000;
  }
  msg.session.deviceId = imei;
  return { deviceId: imei, positions: [], reply: ack(msg) };
}

/** Short (0x7878) frames. */
function decodeBasic(msg: Gt06Message, frame: Uint8Array): Gt06Result {
  switch (msg.type) {
    case 0x13:
      return decodeStatus(msg);
    case 0x23:
      return decodeHeartbeat(msg);
    case 0x2a:
      return decodeAddressRequest();
    case 0x8a:
      return decodeTimeRequest(msg);
    case 0x34:
      return decodeX1Gps(msg);
    case 0x17:
      // Newer firmwares send a GPS + driver-tag message as 0x17 with an honest length.
      return frame.length === msg.length + 5 ? decodeGpsDriver(msg) : decodeWifi(msg, frame);
    case 0x69:
    case 0xf3:
      return decodeWifi(msg, frame);
    case 0x94:
      return decodeBasicInfo(msg);
    case 0x61:
      return decodeGpsImei(msg);
    case 0x36:
      return decode36(msg);
    case 0x15:
      return decodeString(msg);
    case 0x95:
      return decodeAlarm(msg);
    case 0x80:
    case 0x81:
    case 0x82:
      return { positions: [] }; // our own command echoed back: nothing to answer
    default:
      if (isLocationType(msg.type)) return decodeLocation(msg);
      if (CELL_TYPES.has(msg.type)) return decodeCells(msg);
      return { positions: [], reply: ack(msg) };
  }
}

/** Long (0x7979) frames. */
function decodeExtended(msg: Gt06Message): Gt06Result {
  switch (msg.type) {
    case 0x21:
      return decodeStringInfo(msg);
    case 0x94:
      return decodeInfo(msg);
    case 0x9b:
      return decodeSerial(msg);
    case 0x70:
      return decodeModular(msg);
    case 0x8c:
      return decodeObd(msg);
    case 0x38:
      return decodeExtendedGps(msg);
    case 0x32:
    case 0x33:
      return decodeAz735(msg);
    case 0xf1:
      return decodeF1(msg);
    case 0xf2:
      return decodeF2(msg);
    default:
      return { positions: [] };
  }
}

export function decodeGt06(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const msg = parseEnvelope(frame, session);
  if (!msg.extended && msg.type === LOGIN) return decodeLogin(msg);
  // Until a login names the device, its data cannot be attributed: drop it unanswered.
  if (session.deviceId === undefined) return { positions: [] };
  return msg.extended ? decodeExtended(msg) : decodeBasic(msg, frame);
}

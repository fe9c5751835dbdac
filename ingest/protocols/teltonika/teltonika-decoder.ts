import { ByteReader } from '../../codec/byte-reader.ts';
import { crc16Ibm } from '../../codec/crc16.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { CommandAnswer, DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { CODEC_16, CODEC_8, CODEC_8_EXTENDED, CODEC_GH3000, readAvlRecord, readGh3000Record } from './teltonika-records.ts';
import { readCameraMessage, type CameraStep } from './teltonika-camera.ts';
import { CODEC_12, CODEC_13, readCodec12, readCodec13, RESPONSE } from './teltonika-serial.ts';

export const LOGIN_ACCEPTED = Uint8Array.of(0x01);
export const LOGIN_REJECTED = Uint8Array.of(0x00);
const IMEI = /^[0-9]{8,20}$/;

function decodeLogin(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const imei = Buffer.from(frame.subarray(2)).toString('latin1');
  if (!IMEI.test(imei)) throw new MalformedFrameError(`login does not carry an IMEI: ${JSON.stringify(imei.slice(0, 32))}`);
  session.deviceId = imei;
  return { deviceId: imei, positions: [], reply: LOGIN_ACCEPTED };
}

/** The acknowledgement of an AVL packet: the number of records accepted, as 4 bytes. */
export function recordCountAck(count: number): Uint8Array {
  return Uint8Array.of(count >>> 24, (count >>> 16) & 0xff, (count >>> 8) & 0xff, count & 0xff);
}

function decodeAvl(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  if (frame.length < 8 + 3 + 4) throw new MalformedFrameError(`AVL packet of ${frame.length} bytes is too short`);
  const dataEnd = frame.length - 4;
  // The CRC field is 4 bytes; the CRC-16 sits in the low two.
  const crc = (frame[dataEnd + 2]! << 8) | frame[dataEnd + 3]!;
  if (crc !== crc16Ibm(frame, 8, dataEnd)) throw new MalformedFrameError('AVL packet CRC does not match');
  // Records before the login cannot be attributed; no ACK, so the device sends them again after logging in.
  if (!session.deviceId) return { positions: [] };

  const r = new ByteReader(frame, 8, dataEnd);
  const codec = r.u8();
  const count = r.u8();
  const positions: DecodedPosition[] = [];
  const reports: DecodedReport[] = [];
  let answer: CommandAnswer | undefined;
  let camera: CameraStep = {};
  const extended = session.options.extended === true;
  for (let i = 0; i < count; i++) {
    switch (codec) {
      case CODEC_8:
      case CODEC_8_EXTENDED:
      case CODEC_16:
        positions.push(readAvlRecord(r, codec, extended));
        break;
      case CODEC_GH3000: {
        const record = readGh3000Record(r);
        if ('fixTime' in record) positions.push(record);
        else reports.push(record);
        break;
      }
      case CODEC_12: {
        const message = readCodec12(r);
        if ('camera' in message) {
          camera = { ...camera, ...readCameraMessage(message.camera, session) };
          break;
        }
        reports.push(message.report);
        // A response (type 6) answers our command; other types are data the device sends on its own.
        if (message.report.attributes.type === RESPONSE) answer = { text: String(message.report.attributes.result) };
        break;
      }
      case CODEC_13:
        reports.push(readCodec13(r));
        break;
      default:
        throw new MalformedFrameError(`unknown Teltonika codec 0x${codec.toString(16)}`);
    }
  }
  if (r.u8() !== count) throw new MalformedFrameError('AVL packet record counts disagree');
  // Command answers (Codec 12/13) are not acknowledged; data packets are, with the record count. A
  // camera message is answered with the request for the picture's next piece, if any.
  const reply = codec === CODEC_12 || codec === CODEC_13 ? camera.reply : recordCountAck(count);
  return {
    positions, reports, reply,
    ...(answer ? { answer } : {}),
    ...(camera.media ? { media: camera.media } : {}),
    ...(camera.mediaDropped ? { mediaDropped: camera.mediaDropped } : {}),
  };
}

/** Teltonika over TCP: keep-alive byte, IMEI login, or an AVL packet of Codec 8, 8E, 16, 7 (GH3000), 12 or 13. */
export function decodeTeltonika(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  if (frame.length === 1 && frame[0] === 0xff) return { positions: [] };
  if (frame.length < 2) throw new MalformedFrameError('Teltonika frame too short');
  if (frame[0] !== 0 || frame[1] !== 0) return decodeLogin(frame, session);
  return decodeAvl(frame, session);
}

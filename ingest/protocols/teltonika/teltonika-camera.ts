import { ByteReader } from '../../codec/byte-reader.ts';
import { DEFAULT_MEDIA_MAX_BYTES, type DecodedMedia, type DecoderSession } from '../../protocol.ts';
import { encodeCodec12 } from './teltonika-encoder.ts';
import { joinBytes } from '../../codec/join-bytes.ts';

/**
 * Pictures from a camera on a Teltonika tracker, over Codec 12 messages of type 0x0D. The tracker
 * announces a picture, and the server pulls it piece by piece:
 *
 * - tracker: `01 <picture id u32> [<size u32>]`: a picture is ready (some firmwares leave the size out);
 * - server:  `02 <picture id u32> <offset u32> <length u16>`: send me these bytes of it;
 * - tracker: `02 <picture id u32> <offset u32> <length u16> <bytes>`: here they are.
 *
 * The server asks for 2 KiB at a time (the most a tracker sends in one message) until it holds the
 * announced size or, when none was announced, until a piece comes back shorter than asked. The pieces
 * live in the connection's session until then, bounded by its mediaMaxBytes. Subtype 0 (the camera
 * has no picture) carries nothing to keep.
 */

export const CAMERA = 0x0d;
const ANNOUNCE = 0x01;
const PIECE = 0x02;
/** Bytes asked for per request. */
export const CAMERA_PIECE_BYTES = 2048;

interface CameraTransfer {
  id: number;
  /** Announced size; undefined when the tracker did not say. */
  size: number | undefined;
  received: number;
  /** Bytes asked for by the last request: a shorter answer ends a picture of unknown size. */
  asked: number;
  pieces: Uint8Array[];
}

export interface CameraStep {
  reply?: Uint8Array;
  media?: DecodedMedia;
  mediaDropped?: string;
}

/** The server's request for `length` bytes of picture `id` from `offset`, as a whole Codec 12 frame. */
export function cameraRequest(id: number, offset: number, length: number): Uint8Array {
  const payload = Buffer.alloc(11);
  payload[0] = PIECE;
  payload.writeUInt32BE(id >>> 0, 1);
  payload.writeUInt32BE(offset >>> 0, 5);
  payload.writeUInt16BE(length, 9);
  return encodeCodec12(CAMERA, payload);
}

function ask(transfer: CameraTransfer): Uint8Array {
  const left = transfer.size === undefined ? CAMERA_PIECE_BYTES : transfer.size - transfer.received;
  transfer.asked = Math.min(CAMERA_PIECE_BYTES, left);
  return cameraRequest(transfer.id, transfer.received, transfer.asked);
}

const idText = (id: number) => id.toString(16).padStart(8, '0');

/** One camera message (the body of a type 0x0D Codec 12 message) read against the session's transfer. */
export function readCameraMessage(body: Uint8Array, session: DecoderSession): CameraStep {
  if (body.length === 0) return {};
  const r = new ByteReader(body);
  const subtype = r.u8();
  const maxBytes = session.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES;
  let transfer = session.options.teltonikaPicture as CameraTransfer | undefined;
  if (subtype === ANNOUNCE) {
    const id = r.u32();
    const size = r.remaining >= 4 ? r.u32() : undefined;
    if (size !== undefined && size > maxBytes) {
      delete session.options.teltonikaPicture;
      return { mediaDropped: `picture ${idText(id)} is announced as ${size} bytes, over ${maxBytes}` };
    }
    transfer = { id, size, received: 0, asked: 0, pieces: [] };
    if (size === 0) return {};
    session.options.teltonikaPicture = transfer;
    return { reply: ask(transfer) };
  }
  if (subtype !== PIECE) return {};
  const id = r.u32();
  const offset = r.u32();
  const length = r.u16();
  const data = r.slice(Math.min(length, r.remaining));
  // A piece of a picture we are not fetching (announced on an earlier connection): nothing to add it to.
  if (!transfer || transfer.id !== id) return {};
  // Out of step (a resent piece): ask again from what we hold.
  if (offset !== transfer.received) return { reply: ask(transfer) };
  if (transfer.received + data.length > maxBytes) {
    delete session.options.teltonikaPicture;
    return { mediaDropped: `picture ${idText(id)} grew past ${maxBytes} bytes` };
  }
  transfer.pieces.push(data.slice());
  transfer.received += data.length;
  const complete = transfer.size === undefined ? data.length < transfer.asked : transfer.received >= transfer.size;
  if (!complete) return { reply: ask(transfer) };
  delete session.options.teltonikaPicture;
  return { media: { bytes: joinBytes(transfer.pieces, transfer.received), contentType: 'image/jpeg', fileName: `picture_${idText(id)}.jpg` } };
}

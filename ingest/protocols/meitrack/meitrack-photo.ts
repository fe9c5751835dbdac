import type { DecodedFrame, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';

/**
 * D00 photo transfer: `D00,<file name>,<chunk count>,<chunk index>,<jpeg bytes>`. The device sends
 * eight chunks per request; we ask for the next eight after each batch and report the picture
 * once the last chunk is in. The chunks live in the connection's session until then.
 */

const COMMA = 0x2c;
const CHUNKS_PER_REQUEST = 8;
/** Devices cut photos in ~1 KB chunks; this bounds a picture (and the session) to a few MB. */
const MAX_CHUNKS = 4096;
const latin1 = new TextDecoder('latin1');

interface PhotoTransfer {
  file: string;
  total: number;
  next: number;
  bytes: number;
  chunks: Uint8Array[];
}

function field(frame: Uint8Array, from: number): { text: string; end: number } {
  const end = frame.indexOf(COMMA, from);
  if (end < 0) throw new MalformedFrameError('Meitrack D00 chunk header is cut short');
  return { text: latin1.decode(frame.subarray(from, end)), end };
}

export function decodePhotoChunk(
  frame: Uint8Array,
  body: number,
  dataEnd: number,
  imei: string,
  session: DecoderSession,
  request: (content: string) => Uint8Array,
): DecodedFrame {
  const file = field(frame, body);
  const total = field(frame, file.end + 1);
  const index = field(frame, total.end + 1);
  const count = Number(total.text);
  const current = Number(index.text);
  if (!/^\d+$/.test(total.text) || !/^\d+$/.test(index.text) || count < 1 || count > MAX_CHUNKS || current >= count) {
    throw new MalformedFrameError(`Meitrack D00 chunk ${index.text} of ${total.text}`);
  }
  let photo = session.options.meitrackPhoto as PhotoTransfer | undefined;
  // A new file, or chunks out of order after a reconnect: start the picture over.
  if (!photo || photo.file !== file.text || photo.next !== current) {
    if (current !== 0) return { deviceId: imei, positions: [], reply: request(`D00,${file.text},0`) };
    photo = { file: file.text, total: count, next: 0, bytes: 0, chunks: [] };
  }
  const data = frame.subarray(index.end + 1, Math.max(index.end + 1, dataEnd));
  photo.chunks.push(data.slice());
  photo.bytes += data.length;
  photo.next = current + 1;
  if (photo.next === photo.total) {
    delete session.options.meitrackPhoto;
    return { deviceId: imei, positions: [], reports: [{ attributes: { image: photo.file, imageBytes: photo.bytes } }] };
  }
  session.options.meitrackPhoto = photo;
  const reply = photo.next % CHUNKS_PER_REQUEST === 0 ? request(`D00,${photo.file},${photo.next}`) : undefined;
  return { deviceId: imei, positions: [], reply };
}

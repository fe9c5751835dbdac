import { DEFAULT_MEDIA_MAX_BYTES, type DecodedFrame, type DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { joinBytes } from '../../codec/join-bytes.ts';

/**
 * D00 photo transfer: `D00,<file name>,<chunk count>,<chunk index>,<jpeg bytes>`. The server asks
 * with `D00,<file name>,<first chunk>` and the device sends eight chunks from there; we ask for the
 * next eight after each batch, and hand the whole picture to ingest (DecodedFrame.media) once the last
 * chunk is in. The chunks live in the connection's session until then, bounded by its mediaMaxBytes:
 * a picture that grows past it is given up (DecodedFrame.mediaDropped) and its later chunks ignored.
 */

const COMMA = 0x2c;
const CHUNKS_PER_REQUEST = 8;
/** Devices cut photos in ~1 KB chunks; with the byte bound this keeps a session's picture small. */
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

/**
 * The time a Meitrack camera writes at the head of an event picture's name, `yyMMddHHmmss_...`
 * (`180224072614_C1E109_N1U1D1.jpg`), read as UTC like its reports; undefined for other names
 * (`camera_picture.jpg`, a commanded picture).
 */
export function photoNameTime(file: string): Date | undefined {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})_/.exec(file);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const time = new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
  // Date.UTC rolls 31 February over into March: such a name carries no time.
  return time.getUTCMonth() === month - 1 && time.getUTCDate() === day && hour < 24 && minute < 60 && second < 60 ? time : undefined;
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
  // The rest of a picture given up: the device finishes its batch of eight, and is asked for no more.
  if (session.options.meitrackPhotoDropped === file.text) return { deviceId: imei, positions: [] };
  let photo = session.options.meitrackPhoto as PhotoTransfer | undefined;
  // A new file, or chunks out of order after a reconnect: start the picture over.
  if (!photo || photo.file !== file.text || photo.next !== current) {
    if (current !== 0) return { deviceId: imei, positions: [], reply: request(`D00,${file.text},0`) };
    photo = { file: file.text, total: count, next: 0, bytes: 0, chunks: [] };
    delete session.options.meitrackPhotoDropped;
  }
  const data = frame.subarray(index.end + 1, Math.max(index.end + 1, dataEnd));
  const maxBytes = session.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES;
  if (photo.bytes + data.length > maxBytes) {
    delete session.options.meitrackPhoto;
    session.options.meitrackPhotoDropped = photo.file;
    return { deviceId: imei, positions: [], mediaDropped: `the picture ${photo.file} grew past ${maxBytes} bytes at chunk ${current + 1} of ${count}` };
  }
  photo.chunks.push(data.slice());
  photo.bytes += data.length;
  photo.next = current + 1;
  if (photo.next === photo.total) {
    delete session.options.meitrackPhoto;
    const time = photoNameTime(photo.file);
    return {
      deviceId: imei,
      positions: [],
      media: { bytes: joinBytes(photo.chunks, photo.bytes), contentType: 'image/jpeg', fileName: photo.file, ...(time ? { time } : {}) },
    };
  }
  session.options.meitrackPhoto = photo;
  const reply = photo.next % CHUNKS_PER_REQUEST === 0 ? request(`D00,${photo.file},${photo.next}`) : undefined;
  return { deviceId: imei, positions: [], reply };
}

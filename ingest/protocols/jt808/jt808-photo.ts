import { ByteReader } from '../../codec/byte-reader.ts';
import { joinBytes } from '../../codec/join-bytes.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { DEFAULT_MEDIA_MAX_BYTES, type DecodedMedia } from '../../protocol.ts';
import { readBasicLocation } from './jt808-location.ts';
import { generalResponse, replyTo, type Jt808Message, type Jt808Result } from './jt808-message.ts';

/**
 * 0x0801 multimedia data upload. A picture longer than one message comes in subpackages (header
 * flag, total and index from 1); the first holds the multimedia header (id, type, format, event,
 * channel, the 28-byte location) and the picture's first bytes, the others more bytes. Each
 * subpackage gets a 0x8001; once the last index arrived we answer 0x8800 with the ids of those
 * missing (the device resends them), or with none when the picture is whole, and hand the picture to
 * ingest. Packets live in the session until then, bounded by its mediaMaxBytes: a picture growing past
 * it is given up (DecodedFrame.mediaDropped), and the rest of its packets only acknowledged.
 */

const IMAGE = 0;
const FORMATS = ['image/jpeg', 'image/tiff'];
/** The 0x8800 list count is one byte: at most this many packets are asked again at once. */
const MAX_RESEND = 255;

interface Upload {
  mediaId: number;
  total: number;
  contentType: string;
  time: Date | undefined;
  /** Picture bytes per packet index (1..total). */
  packets: Map<number, Uint8Array>;
  bytes: number;
  fileName: string;
}

interface PhotoState {
  upload?: Upload;
  /** The media id of a picture given up: its later packets are acknowledged, not kept. */
  dropped?: number;
}

function state(msg: Jt808Message): PhotoState {
  return (msg.session.options.jt808Photo ??= {}) as PhotoState;
}

/** 0x8800: the media id and the packets to send again (none: the upload is complete). */
function uploadAnswer(msg: Jt808Message, mediaId: number, missing: number[]): Uint8Array {
  const resend = missing.slice(0, MAX_RESEND);
  const body = new Uint8Array(5 + resend.length * 2);
  new DataView(body.buffer).setUint32(0, mediaId);
  body[4] = resend.length;
  resend.forEach((index, i) => {
    body[5 + i * 2] = index >> 8;
    body[6 + i * 2] = index & 0xff;
  });
  return replyTo(msg, 0x8800, body);
}

function joined(...frames: Uint8Array[]): Uint8Array {
  return joinBytes(frames, frames.reduce((n, f) => n + f.length, 0));
}

/**
 * A first packet (or a whole message): the multimedia header, then the picture's first bytes. The
 * upload is undefined for audio and video, which we do not keep.
 */
function startUpload(msg: Jt808Message, total: number): { mediaId: number; upload: Upload | undefined } {
  const r = msg.body;
  const mediaId = r.u32();
  const type = r.u8();
  const format = r.u8();
  const event = r.u8();
  const channel = r.u8();
  const location = readBasicLocation(new ByteReader(r.bytes, r.offset, r.offset + 28));
  r.skip(28);
  if (type !== IMAGE) return { mediaId, upload: undefined };
  const upload: Upload = {
    mediaId,
    total,
    contentType: FORMATS[format] ?? 'application/octet-stream',
    time: Number.isNaN(location.fixTime.getTime()) ? undefined : location.fixTime,
    packets: new Map(),
    bytes: 0,
    fileName: `${mediaId}-ch${channel}-ev${event}.${format === 1 ? 'tif' : 'jpg'}`,
  };
  return { mediaId, upload };
}

export function decodeMediaUpload(msg: Jt808Message): Jt808Result {
  const photo = state(msg);
  const ack = generalResponse(msg);
  const total = msg.packet?.total ?? 1;
  const index = msg.packet?.index ?? 1;
  if (total < 1 || index < 1 || index > total) throw new MalformedFrameError(`jt808: multimedia packet ${index} of ${total}`);
  if (index === 1) {
    const { mediaId, upload } = startUpload(msg, total);
    delete photo.dropped;
    if (!upload) {
      // Audio and video are not kept: acknowledged, so the device moves on.
      delete photo.upload;
      photo.dropped = mediaId;
    } else if (photo.upload?.mediaId !== upload.mediaId || photo.upload.total !== total) photo.upload = upload;
  }
  const upload = photo.upload;
  if (!upload || upload.total !== total) {
    // The rest of an upload given up (or begun before this connection): acknowledged, and its end answered as complete.
    const ended = index === total && photo.dropped !== undefined ? uploadAnswer(msg, photo.dropped, []) : undefined;
    return { positions: [], reply: ended ? joined(ack, ended) : ack };
  }
  const data = msg.body.slice(msg.body.remaining);
  const maxBytes = msg.session.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES;
  const previous = upload.packets.get(index)?.length ?? 0;
  if (upload.bytes - previous + data.length > maxBytes) {
    delete photo.upload;
    photo.dropped = upload.mediaId;
    const done = index === total ? uploadAnswer(msg, upload.mediaId, []) : undefined;
    return { positions: [], reply: done ? joined(ack, done) : ack, mediaDropped: `the picture ${upload.mediaId} grew past ${maxBytes} bytes at packet ${index} of ${total}` };
  }
  upload.packets.set(index, data.slice());
  upload.bytes += data.length - previous;
  // Until the last index has come, the device is still sending: nothing to ask again yet.
  if (index !== total && upload.packets.size < total) return { positions: [], reply: ack };
  const missing: number[] = [];
  for (let i = 1; i <= total; i++) if (!upload.packets.has(i)) missing.push(i);
  if (missing.length > 0) return { positions: [], reply: joined(ack, uploadAnswer(msg, upload.mediaId, missing)) };
  delete photo.upload;
  const pieces: Uint8Array[] = [];
  for (let i = 1; i <= total; i++) pieces.push(upload.packets.get(i)!);
  const media: DecodedMedia = { bytes: joinBytes(pieces, upload.bytes), contentType: upload.contentType, fileName: upload.fileName };
  if (upload.time) media.time = upload.time;
  return { positions: [], reply: joined(ack, uploadAnswer(msg, upload.mediaId, [])), media };
}

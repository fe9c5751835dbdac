import { DEFAULT_MEDIA_MAX_BYTES, type DecodedFrame, type DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { joinBytes } from '../../codec/join-bytes.ts';

/**
 * Camera pictures (the answer to command 160, or an event picture): the device first sends a report
 * whose type is `vt<count>` (the number of chunks to follow), then `count` messages
 * `imei:<imei>,vr,<hex>`, each chunk being index (16-bit little-endian, from 0), data length (16-bit
 * little-endian), the JPEG bytes and two trailing bytes. The chunks are kept in the connection's
 * session, in order, bounded by its mediaMaxBytes; the last one hands the whole picture to ingest.
 * A chunk out of order, or a picture that grows too large, gives the transfer up (mediaDropped).
 */

interface PhotoTransfer {
  total: number;
  next: number;
  bytes: number;
  chunks: Uint8Array[];
}

const KEY = 'gps103Photo';
/** Chunks are 512 bytes; a 5 MiB picture would be about 10 000 of them. */
const MAX_CHUNKS = 20_000;

/** A `vt<count>` report announces a picture of `count` chunks; a new one replaces any unfinished. */
export function startPhoto(type: string, session: DecoderSession): void {
  const m = /^vt(\d{1,6})$/.exec(type);
  if (!m) return;
  const total = Number(m[1]);
  if (total >= 1 && total <= MAX_CHUNKS) session.options[KEY] = { total, next: 0, bytes: 0, chunks: [] } satisfies PhotoTransfer;
  else delete session.options[KEY];
}

/** One `vr` chunk (its hex after `vr,`, without the `;`). */
export function decodePhotoChunk(hex: string, session: DecoderSession, result: DecodedFrame): DecodedFrame {
  if (hex.length % 2 !== 0 || !/^[0-9A-Fa-f]*$/.test(hex)) throw new MalformedFrameError('GPS103 picture chunk is not hexadecimal');
  const bytes = Buffer.from(hex, 'hex');
  if (bytes.length < 6) throw new MalformedFrameError('GPS103 picture chunk is shorter than its header');
  const index = bytes.readUInt16LE(0);
  const length = bytes.readUInt16LE(2);
  if (4 + length > bytes.length - 2) throw new MalformedFrameError(`GPS103 picture chunk says ${length} bytes, holds ${bytes.length - 6}`);
  const photo = session.options[KEY] as PhotoTransfer | undefined;
  // A chunk with no picture announced (the vt report was lost, or the transfer was given up): nothing to add it to.
  if (!photo) return result;
  if (index !== photo.next) {
    delete session.options[KEY];
    return { ...result, mediaDropped: `picture chunk ${index} came when ${photo.next} was expected` };
  }
  const maxBytes = session.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES;
  if (photo.bytes + length > maxBytes) {
    delete session.options[KEY];
    return { ...result, mediaDropped: `the picture grew past ${maxBytes} bytes at chunk ${index + 1} of ${photo.total}` };
  }
  photo.chunks.push(Uint8Array.from(bytes.subarray(4, 4 + length)));
  photo.bytes += length;
  photo.next = index + 1;
  if (photo.next < photo.total) return result;
  delete session.options[KEY];
  return { ...result, media: { bytes: joinBytes(photo.chunks, photo.bytes), contentType: 'image/jpeg' } };
}

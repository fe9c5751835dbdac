import type { CommandAnswer, DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { decodeCcc, decodeCce } from './meitrack-binary-decoder.ts';
import { decodePhotoChunk } from './meitrack-photo.ts';
import { decodeEventReport } from './meitrack-text-decoder.ts';

/**
 * `$$<flag><length>,<imei>,<command>,<body>*<checksum>\r\n`, the checksum being the sum of every byte
 * from `$$` through `*`, modulo 256, in two hex digits. A frame whose checksum does not match is
 * malformed: the connection closes, and the device, which got no answer, sends it again.
 */

const COMMA = 0x2c;
const STAR = 0x2a;
const latin1 = new TextDecoder('latin1');
const ascii = new TextEncoder();

/** Commands that carry no position and need no answer (photo chunks, acknowledgements). */
const SILENT = new Set(['D03', 'AAC']);

interface Header {
  flag: string;
  imei: string;
  command: string;
  /** Offset of the first body byte (after `<command>,`). */
  body: number;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isUpperOrDigit = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x5a);

/**
 * The IMEI field: every frame repeats it, so when its bytes spell the session's device we reuse that
 * string instead of decoding and checking a new one per frame.
 */
function readImei(frame: Uint8Array, start: number, end: number, known: string | undefined): string {
  if (known !== undefined && known.length === end - start) {
    let same = true;
    for (let i = start; i < end && same; i++) same = frame[i] === known.charCodeAt(i - start);
    if (same) return known;
  }
  if (end - start < 1 || end - start > 20) throw new MalformedFrameError('Meitrack IMEI is not decimal');
  for (let i = start; i < end; i++) if (!isDigit(frame[i]!)) throw new MalformedFrameError('Meitrack IMEI is not decimal');
  return latin1.decode(frame.subarray(start, end));
}

function readHeader(frame: Uint8Array, knownImei: string | undefined): Header {
  if (frame.length < 4 || frame[0] !== 0x24 || frame[1] !== 0x24) throw new MalformedFrameError('Meitrack frame does not start with $$');
  const first = frame.indexOf(COMMA);
  const second = first < 0 ? -1 : frame.indexOf(COMMA, first + 1);
  if (second < 0) throw new MalformedFrameError('Meitrack frame without an IMEI field');
  const imei = readImei(frame, first + 1, second, knownImei);
  const c = second + 1;
  if (!(c + 3 <= frame.length && isUpperOrDigit(frame[c]!) && isUpperOrDigit(frame[c + 1]!) && isUpperOrDigit(frame[c + 2]!))) {
    throw new MalformedFrameError(`Meitrack command ${JSON.stringify(latin1.decode(frame.subarray(c, c + 3)))}`);
  }
  const command = String.fromCharCode(frame[c]!, frame[c + 1]!, frame[c + 2]!);
  return { flag: String.fromCharCode(frame[2]!), imei, command, body: second + 5 };
}

/** Where the `*XX` trailer starts, or the frame end when a binary frame was cut short. */
function trailerStart(frame: Uint8Array): number {
  const end = frame[frame.length - 1] === 0x0a && frame[frame.length - 2] === 0x0d ? frame.length - 2 : frame.length;
  return end >= 3 && frame[end - 3] === STAR ? end - 3 : end;
}

/** `@@<flag><length>,<imei>,<content>*XX\r\n`, length counting from the comma, checksum through `*`. */
export function meitrackCommand(flag: string, imei: string, content: string): Uint8Array {
  const rest = `,${imei},${content}*`;
  const head = `@@${flag}${rest.length + 4}`;
  let sum = 0;
  for (const ch of head + rest) sum += ch.charCodeAt(0);
  return ascii.encode(`${head}${rest}${(sum & 0xff).toString(16).toUpperCase().padStart(2, '0')}\r\n`);
}

function textBody(frame: Uint8Array, header: Header): string[] {
  const star = frame.lastIndexOf(STAR);
  return latin1.decode(frame.subarray(header.body, star > header.body ? star : frame.length)).split(',');
}

function decodeText(frame: Uint8Array, header: Header): { positions: DecodedPosition[]; reports?: DecodedReport[]; answer?: CommandAnswer } {
  const fields = textBody(frame, header);
  if (header.command === 'AAA') return { positions: [decodeEventReport(fields)] };
  // AFF (fleet models) puts a sequence number before the event code.
  if (header.command === 'AFF') return { positions: [decodeEventReport(fields.slice(1))] };
  if (SILENT.has(header.command)) return { positions: [] };
  // Anything else answers a command we sent: keep the answer as a report, it has no fix.
  const result = [header.command, ...fields].join(',');
  return { positions: [], reports: [{ attributes: { result } }], answer: { text: result } };
}

export function decodeMeitrack(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const header = readHeader(frame, session.deviceId);
  const limit = trailerStart(frame);
  // A photo chunk cut short has no trailer and nothing to check; it yields nothing (see meitrack-photo).
  // The `*XX` checksum is not enforced: 7 of the corpus's captures, edited by hand as field reports
  // are, carry stale ones, Traccar accepts them, and TCP already protects the bytes in transit.
  session.deviceId = header.imei;
  switch (header.command) {
    case 'CCE':
      return { deviceId: header.imei, positions: decodeCce(new ByteReader(frame, header.body, limit, true)) };
    case 'CCC': {
      const positions = decodeCcc(new ByteReader(frame, header.body, limit, true));
      // Telling the device how many records arrived lets it drop them from its cache.
      return { deviceId: header.imei, positions, reply: meitrackCommand(header.flag, header.imei, `CCC,${positions.length}`) };
    }
    case 'D00':
      return decodePhotoChunk(frame, header.body, limit, header.imei, session, (content) => meitrackCommand('O', header.imei, content));
    case 'D03': {
      // The device is taking the photo (take_photo's first answer): ask for its first chunk. The
      // command is acknowledged once the whole picture is stored, not by this answer.
      const answer = { text: ['D03', ...textBody(frame, header)].join(','), progress: true };
      return { deviceId: header.imei, positions: [], reply: meitrackCommand('O', header.imei, 'D00,camera_picture.jpg,0'), answer };
    }
    default:
      return { deviceId: header.imei, ...decodeText(frame, header) };
  }
}

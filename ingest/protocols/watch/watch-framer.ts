import type { FrameResult } from '../../protocol.ts';

/**
 * Watch frames are `[MANUFACTURER*ID*LENGTH*CONTENT]` (ZJ adds an index: `[ZJ*ID*INDEX*LENGTH*CONTENT]`),
 * LENGTH being the content's byte count in hex (4 digits, more on some 2G watches). Binary content
 * (voice, pictures) is escaped: 0x7D followed by 0x01..0x05 stands for `}`, `[`, `]`, `,` and `*`,
 * and LENGTH counts the bytes with the escapes undone. Text content is not escaped and may hold `]`
 * (a Wi-Fi network's name), so the frame ends where LENGTH says when a `]` stands there, and at the
 * first `]` only when the length is missing or wrong. The frame handed on has the escapes undone.
 */

const OPEN = 0x5b;
const CLOSE = 0x5d;
const STAR = 0x2a;
const ESCAPE = 0x7d;
const UNESCAPED = [0x7d, 0x5b, 0x5d, 0x2c, 0x2a];
/** The header (`[MF*ID*INDEX*LENGTH*`) is short; an id is at most 20 characters. */
const HEADER_MAX = 48;

export function unescapeWatch(bytes: Uint8Array): Uint8Array {
  if (!bytes.includes(ESCAPE)) return bytes;
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const next = bytes[i + 1];
    if (b === ESCAPE && next !== undefined && next >= 1 && next <= 5) {
      out.push(UNESCAPED[next - 1]!);
      i++;
    } else out.push(b);
  }
  return Uint8Array.from(out);
}

const isHex = (b: number | undefined): boolean => b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));

/** Where the content starts and how long it is, or undefined when the header is not (yet) readable. */
function header(buffer: Uint8Array): { contentAt: number; length: number } | undefined {
  const stars: number[] = [];
  for (let i = 1; i < Math.min(buffer.length, HEADER_MAX) && stars.length < 4; i++) {
    if (buffer[i] === STAR) stars.push(i);
    else if (buffer[i] === CLOSE) break;
  }
  if (stars.length < 3) return undefined;
  const hexRun = (from: number, to: number) => to - from >= 2 && to - from <= 8 && buffer.subarray(from, to).every((b) => isHex(b));
  let lengthAt = stars[1]! + 1;
  let lengthEnd = stars[2]!;
  // ZJ: an index of 4 hex digits, then the length.
  if (stars.length === 4 && stars[2]! - stars[1]! === 5 && stars[3]! - stars[2]! === 5 && hexRun(stars[1]! + 1, stars[2]!) && hexRun(stars[2]! + 1, stars[3]!)) {
    lengthAt = stars[2]! + 1;
    lengthEnd = stars[3]!;
  }
  if (!hexRun(lengthAt, lengthEnd)) return undefined;
  return { contentAt: lengthEnd + 1, length: Number.parseInt(Buffer.from(buffer.subarray(lengthAt, lengthEnd)).toString('latin1'), 16) };
}

/** The first `]` that can end a frame: one followed by `[`, a line break, or nothing yet. */
function bracketEnd(buffer: Uint8Array, from: number): number {
  for (let j = buffer.indexOf(CLOSE, from); j >= 0; j = buffer.indexOf(CLOSE, j + 1)) {
    const next = buffer[j + 1];
    if (next === undefined || next === OPEN || next === 0x0d || next === 0x0a) return j;
  }
  return -1;
}

function cut(buffer: Uint8Array, end: number): FrameResult {
  return { kind: 'frame', frame: unescapeWatch(buffer.subarray(0, end + 1)), consumed: end + 1 };
}

export function nextWatchFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] !== OPEN) {
    const next = buffer.indexOf(OPEN, 1);
    return { kind: 'skip', consumed: next < 0 ? buffer.length : next };
  }
  const h = header(buffer);
  if (!h) {
    const end = buffer.indexOf(CLOSE, 1);
    return end < 0 ? { kind: 'incomplete' } : cut(buffer, end);
  }
  // Walk LENGTH unescaped bytes of content.
  let i = h.contentAt;
  for (let count = 0; count < h.length && i < buffer.length; count++) {
    i += buffer[i] === ESCAPE && buffer[i + 1] !== undefined && buffer[i + 1]! >= 1 && buffer[i + 1]! <= 5 ? 2 : 1;
  }
  if (i < buffer.length && buffer[i] === CLOSE) return cut(buffer, i);
  // The length is wrong (watches miscount text with `]` in a Wi-Fi name) or the content is not all
  // here: a `]` followed by the next frame, a line break or nothing ends it.
  const end = bracketEnd(buffer, h.contentAt);
  if (end >= 0) return cut(buffer, end);
  return i >= buffer.length ? { kind: 'incomplete', frameBytes: h.contentAt + h.length + 1 } : { kind: 'incomplete' };
}

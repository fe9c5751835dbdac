import type { FrameResult } from '../../protocol.ts';

/**
 * GPS103 (Coban) messages are ASCII lines with no start marker: most end with `;`, the alternative
 * format ends with `*`, and some firmwares end a message with a bare line break instead. A frame is
 * everything up to and including `;` or `*`, or up to a line break (the break itself is dropped).
 * Every message starts with `imei:`, `##` (login) or a digit (heartbeat); anything else before a
 * message (line breaks, NULs, line noise) is skipped up to the next byte that can start one.
 */

const SEMICOLON = 0x3b;
const STAR = 0x2a;
const LF = 0x0a;
const CR = 0x0d;

const HASH = 0x23;
const LOWER_I = 0x69;

/** Bytes that can start a message: `i` of `imei:`, `#` of `##,imei:`, the IMEI's first digit. */
function canStart(b: number): boolean {
  return b === LOWER_I || b === HASH || (b >= 0x30 && b <= 0x39);
}

export function nextGps103Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (!canStart(buffer[0]!)) {
    let i = 1;
    while (i < buffer.length && !canStart(buffer[i]!)) i++;
    return { kind: 'skip', consumed: i };
  }
  for (let i = 0; i < buffer.length; i++) {
    const b = buffer[i];
    if (b === SEMICOLON || b === STAR) return { kind: 'frame', frame: buffer.subarray(0, i + 1), consumed: i + 1 };
    if (b === LF) {
      const end = i > 0 && buffer[i - 1] === CR ? i - 1 : i;
      return { kind: 'frame', frame: buffer.subarray(0, end), consumed: i + 1 };
    }
  }
  return { kind: 'incomplete' };
}

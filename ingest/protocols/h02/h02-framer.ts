import type { FrameResult } from '../../protocol.ts';

/**
 * H02 trackers mix two framings on one connection: text sentences `*..#` and fixed-length binary
 * records starting with `$` (or `X` for a record the device marks as a reply). Binary records carry
 * no length field, so the length is inferred: 32 bytes (short) or 45 bytes (long, with extra data).
 */

const STAR = 0x2a;
const HASH = 0x23;
const DOLLAR = 0x24;
const X = 0x58;
const SHORT_RECORD = 32;
const LONG_RECORD = 45;

function isMarker(b: number | undefined): boolean {
  return b === STAR || b === DOLLAR || b === X;
}

export function nextH02Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  const first = buffer[0]!;
  if (!isMarker(first)) {
    // Line noise and the \r\n some firmwares put after `#`: drop everything up to the next marker.
    let i = 1;
    while (i < buffer.length && !isMarker(buffer[i])) i++;
    return { kind: 'skip', consumed: i };
  }
  if (first === STAR) return textFrame(buffer);
  if (first === X) return fixed(buffer, SHORT_RECORD);
  return binaryFrame(buffer);
}

function textFrame(buffer: Uint8Array): FrameResult {
  const end = buffer.indexOf(HASH, 0);
  if (end >= 0) return { kind: 'frame', frame: buffer.subarray(0, end + 1), consumed: end + 1 };
  return { kind: 'incomplete' };
}

/**
 * Short and long `$` records start alike. A short record is followed by the next marker or by the
 * end of what arrived (devices send one record per segment); anything else means the long form.
 * A long record cut exactly after 32 bytes is therefore read as a short one: the protocol gives
 * nothing better, and Traccar makes the same segment-aligned assumption.
 */
function binaryFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length < SHORT_RECORD) return { kind: 'incomplete' };
  if (buffer.length === SHORT_RECORD || isMarker(buffer[SHORT_RECORD])) return fixed(buffer, SHORT_RECORD);
  return fixed(buffer, LONG_RECORD);
}

function fixed(buffer: Uint8Array, length: number): FrameResult {
  if (buffer.length < length) return { kind: 'incomplete' };
  return { kind: 'frame', frame: buffer.subarray(0, length), consumed: length };
}

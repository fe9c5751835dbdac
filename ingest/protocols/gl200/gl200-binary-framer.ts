import type { FrameResult } from '../../protocol.ts';

/**
 * Queclink's binary reports share the text protocol's port and its leading `+`. What follows the `+`
 * tells them apart: a zero byte (the record format of newer firmware), a binary header (`+RSP`,
 * `+EVT`, ...), or `+ACK` without the text form's `:`. Each binary header keeps its total frame
 * length (header and `\r\n` tail included) at its own place, one or two bytes wide.
 */

/** Where each binary header keeps the total frame length, and how wide it is. */
const LENGTH_FIELD: Record<string, { at: number; size: 1 | 2 }> = {
  '+RSP': { at: 9, size: 2 }, // report: +RSP, type, 4-byte mask, length
  '+BSP': { at: 9, size: 2 }, // the same, buffered while offline
  '+EVT': { at: 9, size: 2 },
  '+BVT': { at: 9, size: 2 },
  '+INF': { at: 7, size: 2 }, // information: +INF, type, 2-byte mask, length
  '+BNF': { at: 7, size: 2 },
  '+HBD': { at: 5, size: 1 },
  '+CRD': { at: 6, size: 2 },
  '+BRD': { at: 6, size: 2 },
  '+LGN': { at: 6, size: 2 },
  '+ACK': { at: 6, size: 1 }, // +ACK, type, 1-byte mask, length
};

/** `+\0` then a 2-byte length: the record format. */
const RECORD_LENGTH_FIELD = { at: 2, size: 2 } as const;

const HEADERS = Object.keys(LENGTH_FIELD);
const latin1 = new TextDecoder('latin1');

export type Gl200FrameForm = 'binary' | 'text' | 'undecided';

/** Which form the frame starting at `buffer[0]` (a `+`) has; undecided until enough bytes have come. */
export function gl200FrameForm(buffer: Uint8Array): Gl200FrameForm {
  if (buffer.length < 2) return 'undecided';
  if (buffer[1] === 0) return 'binary';
  const head = latin1.decode(buffer.subarray(0, Math.min(4, buffer.length)));
  if (buffer.length < 4) return HEADERS.some((h) => h.startsWith(head)) ? 'undecided' : 'text';
  if (head === '+ACK') {
    if (buffer.length < 5) return 'undecided';
    return buffer[4] === 0x3a ? 'text' : 'binary';
  }
  return LENGTH_FIELD[head] ? 'binary' : 'text';
}

function lengthField(buffer: Uint8Array): { at: number; size: 1 | 2 } {
  return buffer[1] === 0 ? RECORD_LENGTH_FIELD : LENGTH_FIELD[latin1.decode(buffer.subarray(0, 4))]!;
}

/** Cuts one binary frame (the caller has seen gl200FrameForm say 'binary') by its length field. */
export function nextGl200BinaryFrame(buffer: Uint8Array): FrameResult {
  const { at, size } = lengthField(buffer);
  if (buffer.length < at + size) return { kind: 'incomplete' };
  const length = size === 1 ? buffer[at]! : (buffer[at]! << 8) | buffer[at + 1]!;
  // A length that does not even cover its own field cannot be a frame; resyncing inside binary data
  // on the next `+` would only read noise, so the stream is given up.
  if (length < at + size) return { kind: 'invalid', reason: `Queclink binary frame length ${length} is shorter than its header` };
  if (buffer.length < length) return { kind: 'incomplete', frameBytes: length };
  return { kind: 'frame', frame: buffer.subarray(0, length), consumed: length };
}

import type { FrameResult } from '../../protocol.ts';
import { gl200FrameForm, nextGl200BinaryFrame } from './gl200-binary-framer.ts';

/**
 * Queclink text messages start with `+` and end with `$`. Firmware older than the GL300 ends
 * them with a line break instead, so a newline or NUL also closes a frame. Bytes between frames
 * (line breaks, NUL padding, noise) are skipped up to the next `+`. Binary reports, which start
 * with `+` too, are cut by their length field instead (gl200-binary-framer.ts).
 */

const PLUS = 0x2b;
const DOLLAR = 0x24;

export function nextGl200Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] !== PLUS) {
    const next = buffer.indexOf(PLUS);
    return { kind: 'skip', consumed: next < 0 ? buffer.length : next };
  }
  const form = gl200FrameForm(buffer);
  if (form === 'binary') return nextGl200BinaryFrame(buffer);
  // The first bytes of a binary header hold no text delimiter, so waiting loses no text frame.
  if (form === 'undecided') return { kind: 'incomplete' };
  for (let i = 1; i < buffer.length; i++) {
    const b = buffer[i]!;
    if (b === DOLLAR) return { kind: 'frame', frame: buffer.subarray(0, i + 1), consumed: i + 1 };
    if (b === 0x0a || b === 0x0d || b === 0x00) return { kind: 'frame', frame: buffer.subarray(0, i), consumed: i + 1 };
  }
  return { kind: 'incomplete' };
}

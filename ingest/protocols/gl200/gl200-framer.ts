import type { FrameResult } from '../../protocol.ts';

/**
 * Queclink text messages start with `+` and end with `$`. Firmware older than the GL300 ends
 * them with a line break instead, so a newline or NUL also closes a frame. Bytes between frames
 * (line breaks, NUL padding, noise) are skipped up to the next `+`.
 */

const PLUS = 0x2b;
const DOLLAR = 0x24;

export function nextGl200Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] !== PLUS) {
    const next = buffer.indexOf(PLUS);
    return { kind: 'skip', consumed: next < 0 ? buffer.length : next };
  }
  for (let i = 1; i < buffer.length; i++) {
    const b = buffer[i]!;
    if (b === DOLLAR) return { kind: 'frame', frame: buffer.subarray(0, i + 1), consumed: i + 1 };
    if (b === 0x0a || b === 0x0d || b === 0x00) return { kind: 'frame', frame: buffer.subarray(0, i), consumed: i + 1 };
  }
  return { kind: 'incomplete' };
}

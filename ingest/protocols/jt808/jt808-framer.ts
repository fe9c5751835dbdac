import type { FrameResult } from '../../protocol.ts';
import { unescapeFrame } from './jt808-escape.ts';

const FLAG = 0x7e;
const OPEN = 0x28; // '(' starts the text answers of e-lock firmwares: `(740190311185,1,001,ELOCK,3,529439)`
const CLOSE = 0x29;

/**
 * Cuts one JT/T 808 frame: 0x7e to the next 0x7e, handed on with its escapes undone (the decoder
 * checks the checksum, so a frame that fails it is refused there, with a reason). Bytes before a
 * frame start are skipped; a lone 0x7e followed by another is the end of a lost frame, skipped too.
 * Some e-lock firmwares also send parenthesised text on the same connection, cut at ')'.
 */
export function nextJt808Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  const first = buffer[0];
  if (first !== FLAG && first !== OPEN) {
    let next = 1;
    while (next < buffer.length && buffer[next] !== FLAG && buffer[next] !== OPEN) next++;
    return { kind: 'skip', consumed: next };
  }
  if (buffer.length < 2) return { kind: 'incomplete' };
  if (first === OPEN) {
    const end = buffer.indexOf(CLOSE, 1);
    const flag = buffer.indexOf(FLAG, 1);
    // A '(' in line noise before a binary frame is no text: the frame's 0x7e comes before any ')'.
    if (flag >= 0 && (end < 0 || flag < end)) return { kind: 'skip', consumed: flag };
    return end < 0 ? { kind: 'incomplete' } : { kind: 'frame', frame: buffer.subarray(0, end + 1), consumed: end + 1 };
  }
  if (buffer[1] === FLAG) return { kind: 'skip', consumed: 1 };
  const end = buffer.indexOf(FLAG, 1);
  if (end < 0) return { kind: 'incomplete' };
  return { kind: 'frame', frame: unescapeFrame(buffer.subarray(0, end + 1)), consumed: end + 1 };
}

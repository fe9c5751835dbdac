import type { FrameResult } from '../../protocol.ts';

/**
 * Wialon IPS packets are text lines, `#TYPE#data\r\n` (or, as sent over UDP, `<imei>#TYPE#data`
 * with `2.0;` in front on version 2.0). A frame is one line without its line end. Blank line ends
 * (`\r`, `\n`) and NUL padding between packets are skipped; a line that is not a packet is still cut,
 * so the decoder can refuse it and the stream moves on.
 */

const CR = 0x0d;
const LF = 0x0a;
const NUL = 0x00;

export function nextWialonFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  let start = 0;
  while (start < buffer.length && (buffer[start] === CR || buffer[start] === LF || buffer[start] === NUL)) start++;
  if (start > 0) return { kind: 'skip', consumed: start };
  const end = buffer.indexOf(LF);
  if (end < 0) return { kind: 'incomplete' };
  const stop = end > 0 && buffer[end - 1] === CR ? end - 1 : end;
  return { kind: 'frame', frame: buffer.subarray(0, stop), consumed: end + 1 };
}

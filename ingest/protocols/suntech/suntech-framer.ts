import type { FrameResult } from '../../protocol.ts';

/**
 * Suntech messages are `;`-separated ASCII ending in `\r` (`ST300STT;…\r`, `STT;…\r`), or, on universal
 * firmwares set to binary, a frame whose second byte is 0 followed by a 16-bit length (the bytes after
 * the type and length). An extended-data field (UEX) may itself hold `\r\n` or `\n\r`; there the next
 * byte is a `;`, so a `\r` followed by `;` (or by `\n;`) does not end the message.
 */

const CR = 0x0d;
const LF = 0x0a;
const SEMICOLON = 0x3b;

function isLetter(b: number | undefined): boolean {
  return b !== undefined && ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a));
}

export function nextSuntechFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  const first = buffer[0]!;
  if ((first === 0x81 || first === 0x82) && (buffer.length < 2 || buffer[1] === 0)) {
    if (buffer.length < 3) return { kind: 'incomplete' };
    const total = 3 + ((buffer[1]! << 8) | buffer[2]!);
    if (buffer.length < total) return { kind: 'incomplete', frameBytes: total };
    return { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
  }
  if (!isLetter(first)) {
    // \n after a message, line noise: drop up to the next letter (or binary frame start).
    let next = 1;
    while (next < buffer.length && !isLetter(buffer[next]) && buffer[next] !== 0x81 && buffer[next] !== 0x82) next++;
    return { kind: 'skip', consumed: next };
  }
  for (let i = 1; i < buffer.length; i++) {
    if (buffer[i] !== CR) continue;
    const after = buffer[i + 1];
    if (after === SEMICOLON) continue;
    if (after === LF && buffer[i + 2] === SEMICOLON) continue;
    // A `\r` (or `\r\n`) that ends what has arrived ends the message: waiting for a possible `;` would
    // hold every message until the next, since trackers end each one this way.
    return { kind: 'frame', frame: buffer.subarray(0, i), consumed: i + 1 };
  }
  return { kind: 'incomplete' };
}

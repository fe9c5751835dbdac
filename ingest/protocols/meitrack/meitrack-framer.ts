import type { FrameResult } from '../../protocol.ts';

/**
 * Meitrack frames start with `$$`, a one-character flag and a decimal length, then a comma. The
 * length counts every byte after the length digits (the comma, the body, `*XX` and `\r\n`), so a
 * frame is exact even when the body is binary (CCE, CCC, D00 photo chunks contain any byte).
 */

const DOLLAR = 0x24;
const COMMA = 0x2c;

export function nextMeitrackFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] !== DOLLAR || (buffer.length > 1 && buffer[1] !== DOLLAR)) {
    // Line noise: drop everything up to the next possible frame start.
    const next = buffer.indexOf(DOLLAR, 1);
    return { kind: 'skip', consumed: next < 0 ? buffer.length : next };
  }
  let length = 0;
  let i = 3;
  for (; i < buffer.length && buffer[i] !== COMMA; i++) {
    const digit = buffer[i]! - 0x30;
    if (digit < 0 || digit > 9) return { kind: 'invalid', reason: 'Meitrack length is not a decimal number' };
    length = length * 10 + digit;
  }
  if (i >= buffer.length) return { kind: 'incomplete' };
  if (i === 3) return { kind: 'invalid', reason: 'Meitrack frame without a length' };
  const total = i + length;
  if (buffer.length < total) return { kind: 'incomplete', frameBytes: total };
  return { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
}

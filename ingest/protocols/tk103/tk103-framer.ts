import type { FrameResult } from '../../protocol.ts';

/**
 * TK103 messages are ASCII in parentheses: `(<id><command><body>)`. Command answers (ZC03) carry
 * free text between `$` signs that may itself hold parentheses, so `)` inside `$…$` does not end
 * the frame.
 */

const OPEN = 0x28;
const CLOSE = 0x29;
const DOLLAR = 0x24;
const COMMA = 0x2c;

export function nextTk103Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] !== OPEN) {
    // Line noise, \r\n after a frame, stray bytes: drop them up to the next `(`.
    const next = buffer.indexOf(OPEN, 1);
    return { kind: 'skip', consumed: next < 0 ? buffer.length : next };
  }
  let quoted = false;
  for (let i = 1; i < buffer.length; i++) {
    const b = buffer[i];
    // Only `,$` opens a quote, so a stray `$` elsewhere cannot swallow the frames that follow.
    if (b === DOLLAR && (quoted || buffer[i - 1] === COMMA)) quoted = !quoted;
    else if (b === CLOSE && !quoted) return { kind: 'frame', frame: buffer.subarray(0, i + 1), consumed: i + 1 };
  }
  return { kind: 'incomplete' };
}

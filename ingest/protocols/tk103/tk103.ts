import type { Protocol } from '../../protocol.ts';
import { decodeTk103 } from './tk103-decoder.ts';
import { TK103_MAX_FRAME_BYTES, nextTk103Frame } from './tk103-framer.ts';

/** TK103 (Xexun-style and the many compatible trackers): parenthesised ASCII messages. */
export const tk103: Protocol = {
  name: 'tk103',
  defaultPort: 5002,
  maxFrameBytes: TK103_MAX_FRAME_BYTES,
  nextFrame: nextTk103Frame,
  decode: decodeTk103,
};

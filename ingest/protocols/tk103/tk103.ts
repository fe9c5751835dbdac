import type { Protocol } from '../../protocol.ts';
import { tk103Commands } from './tk103-commands.ts';
import { decodeTk103 } from './tk103-decoder.ts';
import { nextTk103Frame } from './tk103-framer.ts';

/** TK103 (Xexun-style and the many compatible trackers): parenthesised ASCII messages. */
export const tk103: Protocol = {
  name: 'tk103',
  defaultPort: 5002,
  // Messages, command answers included, are a few hundred bytes.
  maxFrameBytes: 2048,
  nextFrame: nextTk103Frame,
  decode: decodeTk103,
  commands: tk103Commands,
};

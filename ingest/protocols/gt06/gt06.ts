import type { Protocol } from '../../protocol.ts';
import { gt06Commands } from './gt06-commands.ts';
import { decodeGt06 } from './gt06-decoder.ts';
import { nextGt06Frame } from './gt06-framer.ts';

/** GT06 / Concox binary protocol (GT06N, JM-VL01/02/03, GK310, X1, JC100 and relatives). */
export const gt06: Protocol = {
  name: 'gt06',
  defaultPort: 5023,
  // The biggest real messages (OBD strings, event file lists) stay far below this.
  maxFrameBytes: 2048,
  nextFrame: nextGt06Frame,
  decode: decodeGt06,
  commands: gt06Commands,
};

import type { Protocol } from '../../protocol.ts';
import { gps103Commands } from './gps103-commands.ts';
import { decodeGps103 } from './gps103-decoder.ts';
import { nextGps103Frame } from './gps103-framer.ts';

/** GPS103 (Coban TK103/TK104/GPS-103 and compatibles): comma-separated ASCII ending in `;`. */
export const gps103: Protocol = {
  name: 'gps103',
  defaultPort: 5001,
  // Reports are under 200 bytes; a `vr` picture chunk is a few hundred hex bytes, well under this.
  maxFrameBytes: 2048,
  nextFrame: nextGps103Frame,
  decode: decodeGps103,
  commands: gps103Commands,
};

import type { Protocol } from '../../protocol.ts';
import { suntechCommands } from './suntech-commands.ts';
import { decodeSuntech } from './suntech-decoder.ts';
import { nextSuntechFrame } from './suntech-framer.ts';

/** Suntech (ST200/300/500/600, SA200, ST4xx, ST910 and the universal ST4300 format). */
export const suntech: Protocol = {
  name: 'suntech',
  defaultPort: 5011,
  // Reports with extended data and seven cells are a few hundred bytes.
  maxFrameBytes: 2048,
  nextFrame: nextSuntechFrame,
  decode: decodeSuntech,
  commands: suntechCommands,
};

import type { Protocol } from '../../protocol.ts';
import { meitrackCommands } from './meitrack-commands.ts';
import { decodeMeitrack } from './meitrack-decoder.ts';
import { nextMeitrackFrame } from './meitrack-framer.ts';

/** Meitrack MVT/T/P series trackers (text AAA reports, binary CCE/CCC uploads). */
export const meitrack: Protocol = {
  name: 'meitrack',
  defaultPort: 5020,
  // Photo chunks are the largest frames devices send; four length digits bound them.
  maxFrameBytes: 10_010,
  nextFrame: nextMeitrackFrame,
  decode: decodeMeitrack,
  commands: meitrackCommands,
};

import type { Protocol } from '../../protocol.ts';
import { decodeMeitrack } from './meitrack-decoder.ts';
import { MEITRACK_MAX_FRAME_BYTES, nextMeitrackFrame } from './meitrack-framer.ts';

/** Meitrack MVT/T/P series trackers (text AAA reports, binary CCE/CCC uploads). */
export const meitrack: Protocol = {
  name: 'meitrack',
  defaultPort: 5020,
  maxFrameBytes: MEITRACK_MAX_FRAME_BYTES,
  nextFrame: nextMeitrackFrame,
  decode: decodeMeitrack,
};

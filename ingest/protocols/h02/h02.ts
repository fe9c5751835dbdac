import type { Protocol } from '../../protocol.ts';
import { h02Commands } from './h02-commands.ts';
import { decodeH02 } from './h02-decoder.ts';
import { nextH02Frame } from './h02-framer.ts';

/** H02 (Sinotrack, many no-name "HQ" trackers): text sentences and binary records on one port. */
export const h02: Protocol = {
  name: 'h02',
  defaultPort: 5013,
  // Text sentences are a few hundred bytes; binary records 32 or 45.
  maxFrameBytes: 2048,
  nextFrame: nextH02Frame,
  decode: (frame, session) => decodeH02(frame, session),
  commands: h02Commands,
};

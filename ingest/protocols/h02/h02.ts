import type { Protocol } from '../../protocol.ts';
import { decodeH02 } from './h02-decoder.ts';
import { H02_MAX_FRAME_BYTES, nextH02Frame } from './h02-framer.ts';

/** H02 (Sinotrack, many no-name "HQ" trackers): text sentences and binary records on one port. */
export const h02: Protocol = {
  name: 'h02',
  defaultPort: 5013,
  maxFrameBytes: H02_MAX_FRAME_BYTES,
  nextFrame: nextH02Frame,
  decode: (frame, session) => decodeH02(frame, session),
};

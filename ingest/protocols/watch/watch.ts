import type { Protocol } from '../../protocol.ts';
import { watchCommands } from './watch-commands.ts';
import { decodeWatch } from './watch-decoder.ts';
import { nextWatchFrame } from './watch-framer.ts';

/** Watch (3G/2G personal trackers and kids' watches): `[SG*8800000015*0002*LK]` frames. */
export const watch: Protocol = {
  name: 'watch',
  defaultPort: 5093,
  // Text messages are a few hundred bytes; voice and picture chunks are up to 0xFFFF bytes of content, escaped.
  maxFrameBytes: 140_000,
  nextFrame: nextWatchFrame,
  decode: decodeWatch,
  commands: watchCommands,
};

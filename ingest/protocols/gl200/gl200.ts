import type { Protocol } from '../../protocol.ts';
import { gl200Commands } from './gl200-commands.ts';
import { decodeGl200 } from './gl200-decoder.ts';
import { nextGl200Frame } from './gl200-framer.ts';

/** Queclink @Track protocol (GL200 and its GL/GV/GB successors), text and binary reports on one port. */
export const gl200: Protocol = {
  name: 'gl200',
  defaultPort: 5004,
  // A 15-point GTFRI, a fully masked GTCAN or a binary compressed track (1.4 KB captured) stays well under this.
  maxFrameBytes: 4096,
  nextFrame: nextGl200Frame,
  decode: decodeGl200,
  commands: gl200Commands,
};

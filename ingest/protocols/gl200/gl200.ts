import type { Protocol } from '../../protocol.ts';
import { gl200Commands } from './gl200-commands.ts';
import { decodeGl200 } from './gl200-decoder.ts';
import { nextGl200Frame } from './gl200-framer.ts';

/** Queclink @Track text protocol (GL200 and its GL/GV/GB successors). */
export const gl200: Protocol = {
  name: 'gl200',
  defaultPort: 5004,
  // A 15-point GTFRI or a fully masked GTCAN stays well under this.
  maxFrameBytes: 4096,
  nextFrame: nextGl200Frame,
  decode: decodeGl200,
  commands: gl200Commands,
};

import type { Protocol } from '../../protocol.ts';
import { decodeGl200 } from './gl200-decoder.ts';
import { GL200_MAX_FRAME_BYTES, nextGl200Frame } from './gl200-framer.ts';

/** Queclink @Track text protocol (GL200 and its GL/GV/GB successors). */
export const gl200: Protocol = {
  name: 'gl200',
  defaultPort: 5004,
  maxFrameBytes: GL200_MAX_FRAME_BYTES,
  nextFrame: nextGl200Frame,
  decode: decodeGl200,
};

import type { Protocol } from '../../protocol.ts';
import { teltonikaCommands } from './teltonika-commands.ts';
import { decodeTeltonika, LOGIN_REJECTED } from './teltonika-decoder.ts';
import { nextTeltonikaFrame } from './teltonika-framer.ts';

export const teltonika: Protocol = {
  name: 'teltonika',
  defaultPort: 5027,
  // Devices send at most a few KiB of AVL data, camera chunks ~2 KiB.
  maxFrameBytes: 64 * 1024,
  rejectLogin: LOGIN_REJECTED,
  nextFrame: nextTeltonikaFrame,
  decode: decodeTeltonika,
  commands: teltonikaCommands,
};

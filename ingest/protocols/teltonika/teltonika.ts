import type { Protocol } from '../../protocol.ts';
import { decodeTeltonika, LOGIN_REJECTED } from './teltonika-decoder.ts';
import { nextTeltonikaFrame, TELTONIKA_MAX_FRAME } from './teltonika-framer.ts';

export const teltonika: Protocol = {
  name: 'teltonika',
  defaultPort: 5027,
  maxFrameBytes: TELTONIKA_MAX_FRAME,
  rejectLogin: LOGIN_REJECTED,
  nextFrame: nextTeltonikaFrame,
  decode: decodeTeltonika,
};

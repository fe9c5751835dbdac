import type { Protocol } from '../../protocol.ts';
import { wialonCommands } from './wialon-commands.ts';
import { decodeWialon } from './wialon-decoder.ts';
import { nextWialonFrame } from './wialon-framer.ts';

/** Wialon IPS 1.1 and 2.0: `#TYPE#data\r\n` text packets, sent by many trackers and phone apps. */
export const wialon: Protocol = {
  name: 'wialon',
  defaultPort: 5039,
  // A black box packet holds many records of a few hundred bytes each.
  maxFrameBytes: 32768,
  // Answer 0: the login is rejected.
  rejectLogin: Buffer.from('#AL#0\r\n', 'latin1'),
  nextFrame: nextWialonFrame,
  decode: decodeWialon,
  commands: wialonCommands,
};

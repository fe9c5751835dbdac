import type { Protocol } from '../../protocol.ts';
import { jt808Commands } from './jt808-commands.ts';
import { decodeJt808 } from './jt808-decoder.ts';
import { nextJt808Frame } from './jt808-framer.ts';

/** JT/T 808 (2011, 2013, 2019): the Chinese road-transport terminal protocol, Traccar's "huabao". */
export const jt808: Protocol = {
  name: 'jt808',
  defaultPort: 5015,
  // The longest standard frame is 2092 bytes on the wire: a 1023-byte body under the 2019 header with
  // subpackage fields (1047 bytes with flags and checksum), every byte but the flags escaped to two.
  // Picture packets are close to that. 4 KiB keeps room for vendor messages that overrun it, and still
  // bounds a stream that never sends its closing 0x7e.
  maxFrameBytes: 4096,
  nextFrame: nextJt808Frame,
  decode: (frame, session) => decodeJt808(frame, session),
  commands: jt808Commands,
};

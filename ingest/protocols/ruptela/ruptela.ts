import type { Protocol } from '../../protocol.ts';
import { ruptelaCommands } from './ruptela-commands.ts';
import { decodeRuptela } from './ruptela-decoder.ts';
import { nextRuptelaFrame } from './ruptela-framer.ts';

/** Ruptela (FM-Eco4, FM-Tco4, FM-Pro4 and kin): binary packets with a length, IMEI, command id and CRC16. */
export const ruptela: Protocol = {
  name: 'ruptela',
  defaultPort: 5046,
  // Records packets and photo chunks stay under about 1 KiB; room for twice that.
  maxFrameBytes: 2048,
  nextFrame: nextRuptelaFrame,
  decode: decodeRuptela,
  commands: ruptelaCommands,
};

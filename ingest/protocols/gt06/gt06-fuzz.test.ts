import { crc16X25 } from '../../codec/crc16.ts';
import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import type { Protocol } from '../../protocol.ts';
import { gt06 } from './gt06.ts';

// A session that has seen a login, so data messages are decoded rather than dropped.
const LOGIN = Buffer.from('78780d01086471700328358100093f040d0a', 'hex');
const prepare = (session: Parameters<Protocol['decode']>[1]) => void gt06.decode(LOGIN, session);

fuzzSuite(gt06, { seed: 0x677430, mutationsPerSample: 200, prepare });

/** The frame with its CRC field rewritten to match, when it has one where the decoder looks. */
function withMatchingCrc(frame: Uint8Array): Uint8Array {
  if (frame.length < 8) return frame;
  const fixed = Uint8Array.from(frame);
  const crc = crc16X25(fixed, 2, fixed.length - 4);
  fixed[fixed.length - 4] = crc >> 8;
  fixed[fixed.length - 3] = crc & 0xff;
  return fixed;
}

// Most mutations now end at the CRC check; the same mutations with the CRC made to match reach the
// message decoders behind it, which must hold up just the same.
fuzzSuite({ ...gt06, decode: (frame, session) => gt06.decode(withMatchingCrc(frame), session) }, { seed: 0x677431, mutationsPerSample: 200, prepare });

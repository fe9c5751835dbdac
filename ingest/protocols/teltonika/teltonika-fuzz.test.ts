import { crc16Ibm } from '../../codec/crc16.ts';
import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import type { Protocol } from '../../protocol.ts';
import { teltonika } from './teltonika.ts';

// An identified session, so AVL packets are decoded rather than dropped before a login.
const prepare = (session: Parameters<Protocol['decode']>[1]) => void (session.deviceId = '356307042441013');

fuzzSuite(teltonika, { seed: 0x7e17, mutationsPerSample: 400, prepare });

/** An AVL packet with its CRC field rewritten to match its data; other frames as they are. */
function withMatchingCrc(frame: Uint8Array): Uint8Array {
  if (frame.length < 8 + 3 + 4 || frame[0] !== 0 || frame[1] !== 0) return frame;
  const fixed = Uint8Array.from(frame);
  const crc = crc16Ibm(fixed, 8, fixed.length - 4);
  fixed.set([0, 0, crc >> 8, crc & 0xff], fixed.length - 4);
  return fixed;
}

// Most mutations end at the CRC check; the same mutations with the CRC made to match reach the
// record readers behind it, which must hold up just the same.
fuzzSuite({ ...teltonika, decode: (frame, session) => teltonika.decode(withMatchingCrc(frame), session) }, { seed: 0x7e18, mutationsPerSample: 400, prepare });

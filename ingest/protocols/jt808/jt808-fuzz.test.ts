import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { xorChecksum } from './jt808-escape.ts';
import { jt808 } from './jt808.ts';

fuzzSuite(jt808, { seed: 0x6a7438, mutationsPerSample: 200 });

/** The frame with its checksum byte rewritten to match, when it is framed by 0x7e. */
function withMatchingChecksum(frame: Uint8Array): Uint8Array {
  if (frame.length < 3 || frame[0] !== 0x7e || frame[frame.length - 1] !== 0x7e) return frame;
  const fixed = Uint8Array.from(frame);
  fixed[fixed.length - 2] = xorChecksum(fixed, 1, fixed.length - 2);
  return fixed;
}

// Most mutations end at the checksum; the same mutations with the checksum made to match reach the
// message decoders behind it, which must hold up just the same.
fuzzSuite({ ...jt808, decode: (frame, session) => jt808.decode(withMatchingChecksum(frame), session) }, { seed: 0x6a7439, mutationsPerSample: 200 });

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { meitrack } from './meitrack.ts';

fuzzSuite(meitrack, { seed: 0x6d6569, mutationsPerSample: 200 });

/** The frame with its `*XX` checksum rewritten to match, when it ends in one. */
function withMatchingChecksum(frame: Uint8Array): Uint8Array {
  const end = frame[frame.length - 2] === 0x0d && frame[frame.length - 1] === 0x0a ? frame.length - 2 : frame.length;
  const star = end - 3;
  if (star < 0 || frame[star] !== 0x2a) return frame;
  const fixed = Uint8Array.from(frame);
  let sum = 0;
  for (let i = 0; i <= star; i++) sum += fixed[i]!;
  const digits = (sum & 0xff).toString(16).toUpperCase().padStart(2, '0');
  fixed[star + 1] = digits.charCodeAt(0);
  fixed[star + 2] = digits.charCodeAt(1);
  return fixed;
}

// Most mutations now end at the checksum; the same mutations with the checksum made to match reach
// the text and binary decoders behind it, which must hold up just the same.
fuzzSuite({ ...meitrack, decode: (frame, session) => meitrack.decode(withMatchingChecksum(frame), session) }, { seed: 0x6d656a, mutationsPerSample: 200 });

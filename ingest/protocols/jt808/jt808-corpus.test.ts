import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import type { Protocol } from '../../protocol.ts';
import { jt808 } from './jt808.ts';

/**
 * The corpus gives each message as the tracker sent it, escapes included; on a connection the decoder
 * reads what the framer made of those bytes. So the packets go through the framer first, as they would.
 */
function throughFramer(bytes: Uint8Array): Uint8Array {
  const cut = jt808.nextFrame(bytes);
  return cut.kind === 'frame' && cut.consumed === bytes.length ? cut.frame : bytes;
}

const framed: Protocol = { ...jt808, decode: (bytes, session) => jt808.decode(throughFramer(bytes), session) };

/** Samples we read differently from the reference decoder, each for a stated reason. */
const KNOWN: KnownDeviation[] = [
  {
    test_method: 'testDecode',
    order: 33,
    reason:
      '0x5501 e-lock location whose XOR checksum is 0x1b where its bytes give 0x86 (escaped or not): we refuse frames that fail the checksum, the reference does not check it',
  },
];

conformanceSuite(framed, KNOWN);

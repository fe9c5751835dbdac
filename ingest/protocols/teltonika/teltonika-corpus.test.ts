import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { teltonika } from './teltonika.ts';

/**
 * Samples we knowingly read differently from the corpus, each with its reason. All are captures whose
 * CRC-16 does not match their data (edited by hand for the original test suite; two also declare a
 * data length that is not theirs). We check the CRC, as the issue asks, and refuse such a packet, so a
 * real device, which gets no ACK, sends it again; the reference decoder does not check it.
 */
const BAD_CRC = 'the capture\'s CRC-16/IBM does not match its data; we refuse the packet (no ACK, the device resends)';
const KNOWN: KnownDeviation[] = [
  { test_method: 'testDecode', order: 14, reason: BAD_CRC },
  { test_method: 'testDecode', order: 20, reason: BAD_CRC },
  { test_method: 'testDecode', order: 22, reason: BAD_CRC },
  { test_method: 'testDecode', order: 28, reason: `${BAD_CRC}; its header also declares a data length of 0` },
  { test_method: 'testDecode', order: 33, reason: BAD_CRC },
  { test_method: 'testDecode', order: 36, reason: BAD_CRC },
  { test_method: 'testDecode', order: 40, reason: `${BAD_CRC}; its header declares 166 data bytes for 33` },
  { test_method: 'testDecodePhoto', order: 2, reason: BAD_CRC },
  { test_method: 'testDecodePhoto', order: 3, reason: BAD_CRC },
];

conformanceSuite(teltonika, KNOWN, (session, state) => {
  if (state.extended === true) session.options.extended = true;
});

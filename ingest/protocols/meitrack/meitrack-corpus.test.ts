import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { meitrack } from './meitrack.ts';

/**
 * Samples we knowingly read differently from the corpus, each with its reason. All are captures whose
 * checksum does not match their bytes, edited by hand for the original test suite (a field changed to
 * test another reading, a placeholder IMEI). We check the checksum, as the Teltonika and GT06
 * decoders check their CRCs, and refuse such a frame, so a real device, which gets no answer, sends
 * it again; the reference decoder does not check it.
 */
const BAD_SUM = "the capture's checksum does not match its bytes; we refuse the frame (no answer, the device resends)";
const KNOWN: KnownDeviation[] = [
  { test_method: 'testDecode', order: 3, reason: BAD_SUM },
  { test_method: 'testDecode', order: 4, reason: BAD_SUM },
  { test_method: 'testDecode', order: 13, reason: BAD_SUM },
  { test_method: 'testDecode', order: 24, reason: `${BAD_SUM}; it is #25 with another driver id and #25's checksum` },
  { test_method: 'testDecode', order: 31, reason: `${BAD_SUM}; its 14-digit IMEI also disagrees with the declared length` },
  { test_method: 'testDecode', order: 37, reason: `${BAD_SUM}; it is #36 with altitude 7 changed to -7 and #36's checksum` },
  { test_method: 'testDecode', order: 47, reason: `${BAD_SUM}; placeholder IMEI 123123123123123` },
];

conformanceSuite(meitrack, KNOWN);

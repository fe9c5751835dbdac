import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { suntech } from './suntech.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [
  {
    test_method: 'testDecode',
    order: 0,
    reason:
      'binary frame of type 0x02 (not the 0x81 report or 0x82 alert we know): its layout after the id does not follow the universal field mask (read that way the latitude is out of range), so we refuse it rather than guess',
  },
];

// decoder_state carries the device options Traccar reads from its configuration (hbm, includeAdc, …).
conformanceSuite(suntech, KNOWN, (session, state) => Object.assign(session.options, state));

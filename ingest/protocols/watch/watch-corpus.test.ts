import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { watch } from './watch.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [
  {
    test_method: 'testDecodeVoiceMessage',
    order: 0,
    reason: 'TK voice message (AMR audio): fleetcore stores only camera pictures (DecodedMedia keeps JPEG/PNG), so the audio gives no record rather than an `audio` file attribute',
  },
];

conformanceSuite(watch, KNOWN);

import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { tk103 } from './tk103.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [
  {
    test_method: 'testDecode',
    order: 1,
    reason: 'BS50 battery-pack (BMS) data: the layout is undocumented to us, so it is kept raw as batteryPack rather than guessed into batteryTemp2',
  },
  {
    test_method: 'testDecode',
    order: 12,
    reason: 'DW5B carries only a cell and no GPS fix: we give a report, not a position at 0,0 (the corpus expects a position filled from the last known location)',
  },
  {
    test_method: 'testDecode',
    order: 30,
    reason: 'BO01 with date 06-18-30 (month 18): an impossible date gives a report, not a position whose time Java would roll over into 2007',
  },
];

conformanceSuite(tk103, KNOWN);

import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { gl200 } from './gl200.ts';

/** The corpus files Queclink's binary reports apart, as `gl200bin`; they arrive on gl200's port. No deviations at present. */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(gl200, KNOWN, undefined, 'gl200bin');

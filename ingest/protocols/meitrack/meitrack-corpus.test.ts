import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { meitrack } from './meitrack.ts';

/** Samples we knowingly read differently from the corpus (none at present). */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(meitrack, KNOWN);

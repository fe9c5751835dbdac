import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { gl200 } from './gl200.ts';

/** Samples we knowingly read differently from the corpus (none at present). */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(gl200, KNOWN);

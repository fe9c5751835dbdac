import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { gps103 } from './gps103.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(gps103, KNOWN);

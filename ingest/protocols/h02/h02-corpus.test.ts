import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { h02 } from './h02.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(h02, KNOWN);

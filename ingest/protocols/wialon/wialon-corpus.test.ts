import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { wialon } from './wialon.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(wialon, KNOWN);

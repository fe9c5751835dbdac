import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { ruptela } from './ruptela.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [];

conformanceSuite(ruptela, KNOWN);

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { suntech } from './suntech.ts';

fuzzSuite(suntech, { seed: 0x53540a, mutationsPerSample: 200 });

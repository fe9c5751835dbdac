import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { gps103 } from './gps103.ts';

fuzzSuite(gps103, { seed: 0x677073, mutationsPerSample: 200 });

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { meitrack } from './meitrack.ts';

fuzzSuite(meitrack, { seed: 0x6d6569, mutationsPerSample: 200 });

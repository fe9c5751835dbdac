import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { gl200 } from './gl200.ts';

fuzzSuite(gl200, { seed: 0x676c32, mutationsPerSample: 200 });

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { h02 } from './h02.ts';

fuzzSuite(h02, { seed: 0x683032, mutationsPerSample: 200 });

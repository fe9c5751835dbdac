import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { watch } from './watch.ts';

fuzzSuite(watch, { seed: 0x776174, mutationsPerSample: 200 });

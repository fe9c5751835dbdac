import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { ruptela } from './ruptela.ts';

fuzzSuite(ruptela, { seed: 0x727074, mutationsPerSample: 200 });

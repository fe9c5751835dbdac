import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { tk103 } from './tk103.ts';

fuzzSuite(tk103, { seed: 0x746b31, mutationsPerSample: 200 });

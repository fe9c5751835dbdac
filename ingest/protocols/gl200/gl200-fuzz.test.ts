import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { gl200 } from './gl200.ts';

fuzzSuite(gl200, { seed: 0x676c32, mutationsPerSample: 200 });
// The binary reports share the port, framer and decoder entry; the corpus files them as `gl200bin`.
fuzzSuite(gl200, { seed: 0x676c62, mutationsPerSample: 300, corpusName: 'gl200bin' });

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { wialon } from './wialon.ts';

// Most samples only decode after a login, so half the runs start logged in.
fuzzSuite(wialon, { seed: 0x7769616c, mutationsPerSample: 200 });
fuzzSuite(wialon, { seed: 0x7769616d, mutationsPerSample: 200, prepare: (session) => (session.deviceId = '123456789012345') });

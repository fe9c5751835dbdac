import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { gt06 } from './gt06.ts';

// A session that has seen a login, so data messages are decoded rather than dropped.
const LOGIN = Buffer.from('78780d01086471700328358100093f040d0a', 'hex');

fuzzSuite(gt06, { seed: 0x677430, mutationsPerSample: 200, prepare: (session) => void gt06.decode(LOGIN, session) });

import { fuzzSuite } from '../../conformance/protocol-suites.ts';
import { teltonika } from './teltonika.ts';

// An identified session, so AVL packets are decoded rather than dropped before a login.
fuzzSuite(teltonika, { seed: 0x7e17, mutationsPerSample: 400, prepare: (session) => void (session.deviceId = '356307042441013') });

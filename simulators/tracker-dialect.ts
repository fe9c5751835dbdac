import type { SimulatedFix } from './teltonika-packets.ts';
import { teltonikaCodec8, teltonikaLogin } from './teltonika-packets.ts';
import { gt06Location, gt06Login, readGt06Answer } from './gt06-packets.ts';

/** How a simulated tracker of one protocol logs in, packs its fixes and reads the server's answers. */
export interface TrackerDialect {
  protocol: string;
  maxRecordsPerPacket: number;
  /** The protocol's time resolution: two fixes closer than this would carry the same time. */
  timeResolutionMs: number;
  login(imei: string): Uint8Array;
  /** The login answer at the start of `received`, or undefined while incomplete. */
  readLoginAnswer(received: Uint8Array): { consumed: number; accepted: boolean } | undefined;
  packet(fixes: SimulatedFix[]): Uint8Array;
  /** How many records the answer at the start of `received` acknowledges, or undefined while incomplete. */
  readAck(received: Uint8Array): { consumed: number; records: number } | undefined;
}

export const teltonikaDialect: TrackerDialect = {
  protocol: 'teltonika',
  maxRecordsPerPacket: 50,
  timeResolutionMs: 1,
  login: teltonikaLogin,
  readLoginAnswer: (r) => (r.length < 1 ? undefined : { consumed: 1, accepted: r[0] === 0x01 }),
  packet: teltonikaCodec8,
  readAck: (r) => (r.length < 4 ? undefined : { consumed: 4, records: new DataView(r.buffer, r.byteOffset, 4).getUint32(0) }),
};

let gt06Serial = 1;

/** GT06 sends one fix per message and the server echoes each; a login is accepted by its echo. */
export const gt06Dialect: TrackerDialect = {
  protocol: 'gt06',
  maxRecordsPerPacket: 1,
  timeResolutionMs: 1000,
  login: (imei) => gt06Login(imei, gt06Serial++),
  readLoginAnswer: (r) => {
    const answer = readGt06Answer(r);
    return answer && { consumed: answer.consumed, accepted: answer.type === 0x01 };
  },
  packet: (fixes) => gt06Location(fixes[0]!, gt06Serial++ & 0xffff),
  readAck: (r) => {
    const answer = readGt06Answer(r);
    return answer && { consumed: answer.consumed, records: 1 };
  },
};

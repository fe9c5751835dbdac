import type { SimulatedFix } from './teltonika-packets.ts';
import { readTeltonikaServerMessage, teltonikaCodec8, teltonikaLogin, teltonikaResponse } from './teltonika-packets.ts';
import {
  gt06BatteryHeartbeat, gt06CommandAnswer, gt06Location, gt06Login, gt06NetworkTechnology, readGt06Answer, readGt06ServerMessage,
} from './gt06-packets.ts';
import { obeyGt06, obeyTeltonika, type Obeyed, type Outputs } from './obeyed-commands.ts';

/** A command as the device read it off the wire. */
export interface ReceivedCommand {
  text: string;
  /** What the device must echo in its answer (GT06's server flag). */
  serverFlag?: number;
}

/** A server message after login: an acknowledgement of records (0 for a status message's), or a command. */
export type ServerMessage = { consumed: number } & ({ kind: 'ack'; records: number } | { kind: 'command'; command: ReceivedCommand });

/** How a simulated tracker of one protocol logs in, packs its fixes, reads the server and obeys its commands. */
export interface TrackerDialect {
  protocol: string;
  maxRecordsPerPacket: number;
  /** The protocol's time resolution: two fixes closer than this would carry the same time. */
  timeResolutionMs: number;
  login(imei: string): Uint8Array;
  /** The login answer at the start of `received`, or undefined while incomplete. */
  readLoginAnswer(received: Uint8Array): { consumed: number; accepted: boolean } | undefined;
  packet(fixes: SimulatedFix[]): Uint8Array;
  /**
   * What the device reports of itself apart from its fixes (its radio, its battery), as of `fix`; sent
   * after each login and then now and then. Undefined for protocols whose fixes carry all of it.
   */
  status?(fix: SimulatedFix): Uint8Array;
  /** The server message at the start of `received`, or undefined while incomplete. */
  readServerMessage(received: Uint8Array): ServerMessage | undefined;
  /** What the device does with a command: its outputs afterwards and its answer text. */
  obey(command: ReceivedCommand, outputs: Outputs): Obeyed;
  /** The answer frame carrying `text` for `command`. */
  answer(command: ReceivedCommand, text: string): Uint8Array;
}

export const teltonikaDialect: TrackerDialect = {
  protocol: 'teltonika',
  maxRecordsPerPacket: 50,
  timeResolutionMs: 1,
  login: teltonikaLogin,
  readLoginAnswer: (r) => (r.length < 1 ? undefined : { consumed: 1, accepted: r[0] === 0x01 }),
  packet: teltonikaCodec8,
  readServerMessage: (r) => {
    const message = readTeltonikaServerMessage(r);
    if (!message) return undefined;
    return message.kind === 'ack' ? message : { kind: 'command', consumed: message.consumed, command: { text: message.text } };
  },
  obey: (command, outputs) => obeyTeltonika(command.text, outputs),
  answer: (_command, text) => teltonikaResponse(text),
};

let gt06Serial = 1;
/** Message types of the GT06 status (information 0x94, heartbeat 0x23): their answers acknowledge no fix. */
const GT06_STATUS_TYPES = new Set([0x94, 0x23]);

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
  // A 4G model: its network, then a heartbeat with its battery and 3 of 4 signal bars.
  status: (fix) =>
    Buffer.concat([
      gt06NetworkTechnology('4G', gt06Serial++ & 0xffff),
      gt06BatteryHeartbeat({ ignition: fix.ignition, battery: fix.battery ?? 4.1, gsm: 3 }, gt06Serial++ & 0xffff),
    ]),
  readServerMessage: (r) => {
    const message = readGt06ServerMessage(r);
    if (!message) return undefined;
    if (message.kind === 'ack') return { kind: 'ack', consumed: message.consumed, records: GT06_STATUS_TYPES.has(message.type) ? 0 : 1 };
    return { kind: 'command', consumed: message.consumed, command: { text: message.text, serverFlag: message.serverFlag } };
  },
  obey: (command, outputs) => obeyGt06(command.text, outputs),
  answer: (command, text) => gt06CommandAnswer(command.serverFlag ?? 0, text, gt06Serial++ & 0xffff),
};

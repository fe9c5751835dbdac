import type { SimulatedFix } from './teltonika-packets.ts';
import { readTeltonikaServerMessage, teltonikaCodec8, teltonikaLogin, teltonikaResponse } from './teltonika-packets.ts';
import {
  gt06BatteryHeartbeat, gt06CommandAnswer, gt06Location, gt06Login, gt06NetworkTechnology, readGt06Answer, readGt06ServerMessage,
} from './gt06-packets.ts';
import { gps103Answer, gps103Heartbeat, gps103Login, gps103Reports, readGps103ServerMessage } from './gps103-packets.ts';
import {
  JT808, jt808Authentication, jt808Locations, jt808Registration, jt808TerminalResponse, readJt808PlatformMessage, type Jt808PlatformMessage,
} from './jt808-packets.ts';
import { obeyGps103, obeyGt06, obeyJt808, obeyTeltonika, type Obeyed, type Outputs } from './obeyed-commands.ts';

/** A command as the device read it off the wire. */
export interface ReceivedCommand {
  text: string;
  /** What the device must echo in its answer (GT06's server flag). */
  serverFlag?: number;
  /** The message the answer names (JT/T 808: the command's message id and serial). */
  messageId?: number;
  serial?: number;
}

/**
 * A server message after login: an acknowledgement of records (0 for a status message's, Infinity for
 * every record in flight), or a command.
 */
export type ServerMessage = { consumed: number } & ({ kind: 'ack'; records: number } | { kind: 'command'; command: ReceivedCommand });

/** How a simulated tracker of one protocol logs in, packs its fixes, reads the server and obeys its commands. */
export interface TrackerDialect {
  protocol: string;
  maxRecordsPerPacket: number;
  /** The protocol's time resolution: two fixes closer than this would carry the same time. */
  timeResolutionMs: number;
  login(imei: string): Uint8Array;
  /**
   * The login answer at the start of `received`, or undefined while incomplete. With `send`, the login
   * goes on (JT/T 808: registered, now authenticate with the code the server gave): those bytes go
   * out and the next login answer is read.
   */
  readLoginAnswer(received: Uint8Array): { consumed: number; accepted: boolean; send?: Uint8Array } | undefined;
  /**
   * The fixes as one upload. `imei` is the device's: protocols that name the device in every message
   * (GPS103, JT/T 808) need it, so the trackers always pass it; those that name it only at login ignore it.
   */
  packet(fixes: SimulatedFix[], imei?: string): Uint8Array;
  /**
   * What the device reports of itself apart from its fixes (its radio, its battery), as of `fix`; sent
   * after each login and then now and then. Undefined for protocols whose fixes carry all of it.
   */
  status?(fix: SimulatedFix, imei?: string): Uint8Array;
  /** The server message at the start of `received`, or undefined while incomplete. */
  readServerMessage(received: Uint8Array): ServerMessage | undefined;
  /** What the device does with a command: its outputs afterwards and its answer text. */
  obey(command: ReceivedCommand, outputs: Outputs): Obeyed;
  /** The answer frame carrying `text` for `command` (empty for an answer the device does not give). */
  answer(command: ReceivedCommand, text: string, imei?: string): Uint8Array;
}

/** The device's IMEI, which a protocol naming the device in every message cannot do without. */
function named(protocol: string, imei: string | undefined): string {
  if (imei === undefined) throw new Error(`${protocol} messages name their device: pass the tracker's IMEI`);
  return imei;
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

const LOAD = Buffer.from('LOAD', 'latin1');

/**
 * GPS103 (Coban TK103A/B) text lines. The protocol acknowledges no report, so each upload (report
 * lines, up to 10 as a device empties its memory) is followed by a heartbeat, and the heartbeat's `ON`
 * acknowledges every line before it: the server handles a connection's lines in order and answers
 * one only once those before it are stored (ingest/frame-pump.ts, handle-tracker-frame.ts), so `ON`
 * means stored, and a tracker that lost its connection before `ON` sends those lines again (the
 * store ignores a fix it already has). Against a server that answered `ON` on arrival it would only
 * mean received.
 */
export const gps103Dialect: TrackerDialect = {
  protocol: 'gps103',
  maxRecordsPerPacket: 10,
  // The fix time is read to the second (the UTC field's milliseconds are not kept).
  timeResolutionMs: 1000,
  login: gps103Login,
  readLoginAnswer: (r) => {
    const length = Math.min(r.length, LOAD.length);
    if (!LOAD.subarray(0, length).equals(r.subarray(0, length))) return { consumed: 0, accepted: false };
    return length < LOAD.length ? undefined : { consumed: LOAD.length, accepted: true };
  },
  packet: (fixes, imei) => {
    const device = named('gps103', imei);
    return Buffer.concat([gps103Reports(device, fixes), gps103Heartbeat(device)]);
  },
  readServerMessage: (r) => {
    const message = readGps103ServerMessage(r);
    if (!message) return undefined;
    if (message.kind === 'command') return { kind: 'command', consumed: message.consumed, command: { text: message.code } };
    return { kind: 'ack', consumed: message.consumed, records: message.kind === 'on' ? Number.POSITIVE_INFINITY : 0 };
  },
  obey: (command, outputs) => obeyGps103(command.text, outputs),
  answer: (_command, text, imei) => (text === '' ? new Uint8Array(0) : gps103Answer(named('gps103', imei), text, new Date())),
};

let jt808Serial = 0;
const nextJt808Serial = () => (jt808Serial = (jt808Serial + 1) & 0xffff);
/** The general response's result codes (JT/T 808 8.1), by the words the simulated terminal answers in. */
const JT808_RESULTS = ['success', 'failure', 'message error', 'not supported'];
const NOTHING = new Uint8Array(0);

/** A platform command as the terminal reads it: `terminal control 0xf0`, `text <message>`, `vehicle control <hex>`, `message 0x8801`. */
function jt808CommandText(message: Jt808PlatformMessage): string {
  if (message.id === JT808.terminalControl) return `terminal control 0x${(message.body[0] ?? 0).toString(16).padStart(2, '0')}`;
  if (message.id === JT808.textMessage) return `text ${message.body.subarray(1).toString('latin1')}`;
  if (message.id === JT808.vehicleControl) return `vehicle control ${message.body.toString('hex')}`;
  return `message 0x${message.id.toString(16).padStart(4, '0')}`;
}

/**
 * JT/T 808-2019 terminals numbered by their IMEI (the 2019 header's 10-byte terminal number, which the
 * decoder reads back as the IMEI). Login is two steps: registration (0x0100), answered 0x8100 with an
 * authentication code, then authentication (0x0102) with that code, answered 0x8001. A fix goes as
 * 0x0200, several as one 0x0704 batch; the platform's 0x8001 to either acknowledges the upload.
 */
export const jt808Dialect: TrackerDialect = {
  protocol: 'jt808',
  // 0x0704 items of 42 bytes in a body of at most 1023.
  maxRecordsPerPacket: 20,
  timeResolutionMs: 1000,
  login: (imei) => jt808Registration(imei, nextJt808Serial()),
  readLoginAnswer: (r) => {
    const message = readJt808PlatformMessage(r);
    if (!message) return undefined;
    const { consumed, body } = message;
    if (message.id === JT808.registrationAnswer && body.length >= 3) {
      if (body[2] !== 0) return { consumed, accepted: false };
      return { consumed, accepted: true, send: jt808Authentication(message.terminal, body.subarray(3), nextJt808Serial()) };
    }
    if (message.id === JT808.platformResponse && body.length >= 5 && body.readUInt16BE(2) === JT808.authentication) return { consumed, accepted: body[4] === 0 };
    // Anything else before the login is through (noise, a command sent early): read on.
    return { consumed, accepted: true, send: NOTHING };
  },
  packet: (fixes, imei) => jt808Locations(named('jt808', imei), fixes, nextJt808Serial()),
  readServerMessage: (r) => {
    const message = readJt808PlatformMessage(r);
    if (!message) return undefined;
    const { consumed, body } = message;
    if (message.id === -1 || message.id === JT808.registrationAnswer) return { kind: 'ack', consumed, records: 0 };
    if (message.id === JT808.platformResponse) {
      const answered = body.length >= 5 ? body.readUInt16BE(2) : -1;
      const upload = answered === JT808.location || answered === JT808.locationBatch;
      return { kind: 'ack', consumed, records: upload && body[4] === 0 ? Number.POSITIVE_INFINITY : 0 };
    }
    return { kind: 'command', consumed, command: { text: jt808CommandText(message), messageId: message.id, serial: message.serial } };
  },
  obey: (command, outputs) => obeyJt808(command.text, outputs),
  answer: (command, text, imei) => {
    const result = JT808_RESULTS.indexOf(text);
    return jt808TerminalResponse(named('jt808', imei), { serial: command.serial ?? 0, id: command.messageId ?? 0 }, result < 0 ? 1 : result, nextJt808Serial());
  },
};

/** The dialects `fleet simulate --protocol` and `bench ingest --protocol=` speak, by protocol name. */
export const TRACKER_DIALECTS: Readonly<Record<string, TrackerDialect>> = {
  teltonika: teltonikaDialect,
  gt06: gt06Dialect,
  gps103: gps103Dialect,
  jt808: jt808Dialect,
};

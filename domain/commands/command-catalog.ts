import { DomainError } from '../domain-error.ts';

/**
 * The commands a dispatcher can send, whatever the tracker: each protocol's encoder says which it can
 * express and turns one into the exact bytes that protocol's devices expect (`ingest/protocols/<name>/
 * <name>-commands.ts`). Pure functions: no sockets, no database.
 */
export const COMMAND_TYPES = ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo', 'custom'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export interface CommandRequest {
  type: CommandType;
  /** Type-specific options (`output`: which digital output drives the relay, `camera`, ...). */
  params: Record<string, unknown>;
  /** The raw command text of a `custom` command, sent as the protocol frames text. */
  text?: string;
}

export interface CommandContext {
  /** The device's identifier as it logged in (IMEI, or the protocol's own id). */
  deviceId: string;
  /** A number this connection has not used for another command (frame serial, server flag). */
  serial: number;
  /**
   * What the device's connection has told its decoder of itself (DecoderSession.options): how it
   * frames its own messages, which some protocols' commands must match (a watch's manufacturer
   * prefix, a JT/T 808 terminal's header edition). Absent when a command is checked with no connection.
   */
  said?: Readonly<Record<string, unknown>>;
}

export interface CommandEncoder {
  protocol: string;
  /** The types this protocol can express; others are refused before anything is stored. */
  types: readonly CommandType[];
  /** The bytes to write to the device's connection. Throws CommandNotEncodable for a bad request. */
  encode(command: CommandRequest, context: CommandContext): Uint8Array;
  /**
   * The number the device's answer echoes for this command sent with this serial (CommandAnswer.serial),
   * for protocols whose answers echo one: an answer that echoes another is not this command's.
   * Undefined (or no function): the answer is not checked against a number.
   */
  answerSerial?(command: CommandRequest, serial: number): number | undefined;
}

/**
 * A command's serial on the wire, from its id: the same on every attempt, so an answer to an earlier
 * attempt (on an earlier connection) still names its command. Protocols keep the bits they have room for.
 */
export function commandSerial(id: string): number {
  return Number(BigInt(id) % 0x1_0000_0000n);
}

/** A command this protocol cannot express as given (an unknown output, text it cannot carry). */
export class CommandNotEncodable extends DomainError {
  override name = 'CommandNotEncodable';
  constructor(message: string) {
    super('invalid', message);
  }
}

/** The `text` of a custom command: required, printable, at most `max` bytes. */
export function customText(command: CommandRequest, protocol: string, max: number): string {
  const text = command.text;
  if (typeof text !== 'string' || text.length === 0) throw new CommandNotEncodable(`${protocol}: a custom command needs its text`);
  if (!/^[\x20-\x7e]+$/.test(text)) throw new CommandNotEncodable(`${protocol}: a custom command's text must be printable ASCII`);
  if (text.length > max) throw new CommandNotEncodable(`${protocol}: a custom command's text may be at most ${max} characters`);
  return text;
}

/** A whole-number param within [min, max], or the fallback when absent. */
export function integerParam(command: CommandRequest, name: string, fallback: number, min: number, max: number, protocol: string): number {
  const value = command.params[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new CommandNotEncodable(`${protocol}: params.${name} must be a whole number from ${min} to ${max}`);
  }
  return value;
}
